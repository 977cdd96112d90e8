// Builds the site into dist/ (committed; web.go embeds it): one JS bundle,
// one stylesheet and index.html. The same sources give the same bytes
// (no hashes of paths or times in the output), so `make check-generate`
// can tell a stale dist/ from a fresh one. Fails over the budget
// (decision 0160).
import { build } from "esbuild";
import { copyFile, mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(root, "dist");
// First-load budget, gzip: index.html, app.js and app.css together (the
// QR code's chunk loads later, with the tickets).
const BUDGET_GZIP_BYTES = 100 * 1024;

await rm(dist, { recursive: true, force: true });
await mkdir(path.join(dist, "assets"), { recursive: true });
const common = { bundle: true, minify: true, legalComments: "none", charset: "utf8", logLevel: "warning", absWorkingDir: root };
await build({
  ...common,
  entryPoints: ["src/main.tsx"],
  outdir: "dist/assets",
  entryNames: "app",
  chunkNames: "[name]-[hash]",
  splitting: true,
  format: "esm",
  target: ["es2022", "chrome100", "safari15.4", "firefox100"],
  jsx: "automatic",
  jsxImportSource: "preact",
  // The SDK from its source, browser entry (clients/ts, @seatghor/client).
  alias: { "@seatghor/client": path.join(root, "../ts/src/browser.ts") },
});
// The gate's offline side (src/gate, docs/gate-offline.md) is a bundle of
// its own, assets/gate.js, which the gate page loads by its address: built
// apart, it shares no chunk with app.js (it has its own small copy of
// Preact), so a buyer's first load stays app.js alone. Its Ed25519 library
// is a chunk it loads only where the browser cannot verify Ed25519.
await build({
  ...common,
  entryPoints: { gate: "src/gate/index.ts" },
  outdir: "dist/assets",
  chunkNames: "[name]-[hash]",
  splitting: true,
  format: "esm",
  target: ["es2022", "chrome100", "safari15.4", "firefox100"],
  jsx: "automatic",
  jsxImportSource: "preact",
});
// The fonts stay files of their own beside app.css (its @font-face names
// them), not inlined.
await build({ ...common, entryPoints: ["src/app.css"], outfile: "dist/assets/app.css", external: ["*.woff2"] });
await copyFile(path.join(root, "src/index.html"), path.join(dist, "index.html"));
// The Bengali subset of Noto Sans Bengali (SIL OFL 1.1, its licence beside
// it), regular and bold, for phones and kiosks without a Bengali font. Its
// @font-face has a Bengali unicode-range, so a browser fetches it only for a
// page with Bengali text: it is not part of the first load (decision 0308).
const fonts = path.join(root, "node_modules/@fontsource/noto-sans-bengali");
for (const weight of ["400", "700"]) {
  await copyFile(path.join(fonts, `files/noto-sans-bengali-bengali-${weight}-normal.woff2`),
    path.join(dist, `assets/noto-sans-bengali-${weight}.woff2`));
}
await copyFile(path.join(fonts, "LICENSE"), path.join(dist, "assets/noto-sans-bengali-OFL.txt"));

let total = 0;
for (const f of ["index.html", "assets/app.js", "assets/app.css"]) {
  const body = await readFile(path.join(dist, f));
  const gz = gzipSync(body, { level: 9 }).length;
  total += gz;
  console.log(`${f.padEnd(16)} ${String(body.length).padStart(7)} B  ${String(gz).padStart(6)} B gzip`);
}
console.log(`first load       ${String(total).padStart(17)} B gzip (budget ${BUDGET_GZIP_BYTES})`);
if (total > BUDGET_GZIP_BYTES) {
  console.error(`web: the first load is ${total} B gzip, over the budget of ${BUDGET_GZIP_BYTES} B (decision 0160)`);
  process.exit(1);
}
