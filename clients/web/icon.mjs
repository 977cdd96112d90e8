// The app's icon, drawn as SVG: a white seat on the brand's green. build.mjs
// renders it to the PNGs the web app manifest names (resvg, compiled to
// WebAssembly: the same SVG gives the same bytes on every machine).
// "any" icons have rounded corners; the maskable one fills its square, the
// seat inside the central safe zone (a circle of 80 % of the width), as
// launchers crop it to their own shape.

/** The site's brand green and page background (app.css --brand, --bg). */
export const THEME_COLOR = "#0b6e4f";
export const BACKGROUND_COLOR = "#f6f7f9";

/** The icon as an SVG document on a 512-unit square. */
export function iconSVG({ maskable = false } = {}) {
  const bg = maskable
    ? `<rect width="512" height="512" fill="${THEME_COLOR}"/>`
    : `<rect width="512" height="512" rx="112" fill="${THEME_COLOR}"/>`;
  // The seat: a backrest, a cushion, two armrests and two legs; smaller in
  // the maskable icon, where only the central circle is sure to show.
  const seat = [
    `<rect x="176" y="104" width="160" height="196" rx="30"/>`,
    `<rect x="140" y="292" width="232" height="64" rx="24"/>`,
    `<rect x="112" y="212" width="44" height="144" rx="20"/>`,
    `<rect x="356" y="212" width="44" height="144" rx="20"/>`,
    `<rect x="172" y="350" width="36" height="72" rx="10"/>`,
    `<rect x="304" y="350" width="36" height="72" rx="10"/>`,
  ].join("");
  const scale = maskable ? 0.72 : 1;
  const shift = (512 * (1 - scale)) / 2;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512">${bg}` +
    `<g fill="#fff" transform="translate(${shift} ${shift}) scale(${scale})">${seat}</g></svg>`;
}
