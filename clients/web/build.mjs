// Builds the site into dist/ (committed; web.go embeds it): one JS bundle,
// one stylesheet and index.html; the web app's manifest, its icons and the
// service worker (decision 0397). The same sources give the same bytes
// (no hashes of paths or times in the output), so `make check-generate`
// can tell a stale dist/ from a fresh one. Fails over the budget
// (decision 0160).
import { build } from "esbuild";
import { initWasm, Resvg } from "@resvg/resvg-wasm";
import { createHash } from "node:crypto";
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

import { BACKGROUND_COLOR, THEME_COLOR, iconSVG } from "./icon.mjs";
import { noValidationRules } from "./novalidate.mjs";

const root = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(root, "dist");
// First-load budget, gzip: index.html, app.js with the chunks it imports
// statically (the code it shares with a lazy page), and app.css together
// (the QR code's chunk loads later, with the tickets).
const BUDGET_GZIP_BYTES = 100 * 1024;

await rm(dist, { recursive: true, force: true });
await mkdir(path.join(dist, "assets"), { recursive: true });
const common = { bundle: true, minify: true, legalComments: "none", charset: "utf8", logLevel: "warning", absWorkingDir: root,
  plugins: [noValidationRules] };
const app = await build({
  ...common,
  metafile: true,
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
// The staff pages are bundles of their own for the same reason: the trip
// supervisor's manifest (src/manifest, decision 0442), the operator's
// counter (src/counter, 0443) and the console (src/console, 0446), each
// assets/<name>.js. Staff's pages stay out of a buyer's first load; each
// renders with its own Preact into an element the shell gives it.
for (const name of ["manifest", "counter", "console"]) {
  await build({
    ...common,
    entryPoints: { [name]: `src/${name}/index.tsx` },
    outdir: "dist/assets",
    format: "esm",
    target: ["es2022", "chrome100", "safari15.4", "firefox100"],
    jsx: "automatic",
    jsxImportSource: "preact",
    alias: { "@seatghor/client": path.join(root, "../ts/src/browser.ts") },
    // A stylesheet a staff page imports (uPlot's, in the console) comes as
    // its text, which the page puts in when it mounts: none of it in
    // app.css, which every buyer loads.
    loader: { ".css": "text" },
  });
}
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

// The icons, rendered from icon.mjs's SVG by resvg (WebAssembly: the same
// bytes on every machine), and the web app manifest naming them.
await initWasm(await readFile(createRequire(import.meta.url).resolve("@resvg/resvg-wasm/index_bg.wasm")));
await mkdir(path.join(dist, "icons"), { recursive: true });
const icons = [
  { file: "icon-192.png", size: 192, maskable: false },
  { file: "icon-512.png", size: 512, maskable: false },
  { file: "icon-maskable-512.png", size: 512, maskable: true },
  // iOS's home screen takes this one (index.html's apple-touch-icon); it
  // rounds the corners itself.
  { file: "apple-touch-icon.png", size: 180, maskable: true },
];
for (const icon of icons) {
  const png = new Resvg(iconSVG({ maskable: icon.maskable }), { fitTo: { mode: "width", value: icon.size } }).render().asPng();
  await writeFile(path.join(dist, "icons", icon.file), png);
}
const manifest = {
  id: "/",
  name: "Seatghor (সিটঘর)",
  short_name: "Seatghor",
  description: "Bus seats and event tickets; your tickets with you offline.",
  lang: "en",
  dir: "ltr",
  start_url: "/",
  scope: "/",
  display: "standalone",
  theme_color: THEME_COLOR,
  background_color: BACKGROUND_COLOR,
  icons: icons.filter((i) => i.file.startsWith("icon-")).map((i) => ({
    src: `/icons/${i.file}`, sizes: `${i.size}x${i.size}`, type: "image/png", purpose: i.maskable ? "maskable" : "any",
  })),
  shortcuts: [{ name: "My tickets (আমার টিকিট)", short_name: "My tickets", url: "/tickets" }],
  // The Bengali names (the manifest's proposed localisation member; a
  // browser without it shows the names above, which carry both).
  translations: {
    bn: {
      name: "সিটঘর (Seatghor)",
      short_name: "সিটঘর",
      description: "বাসের আসন আর অনুষ্ঠানের টিকিট; আপনার টিকিট অফলাইনেও আপনার সাথে।",
      shortcuts: [{ name: "আমার টিকিট", short_name: "আমার টিকিট" }],
    },
  },
};
await writeFile(path.join(dist, "manifest.webmanifest"), JSON.stringify(manifest, null, 2) + "\n");

// The service worker, with the list of files it precaches (Workbox's
// injected manifest: each file's address and a hash of its bytes): the
// shell at "/" and every script and stylesheet of assets/. Not the fonts
// (kept when a Bengali page first fetches them) nor the icons (the
// browser fetches those itself when it installs the app).
const revision = async (f) => createHash("sha256").update(await readFile(path.join(dist, f))).digest("hex").slice(0, 16);
const precache = [{ url: "/", revision: await revision("index.html") }];
for (const f of (await readdir(path.join(dist, "assets"))).sort()) {
  // The manifest is staff's and needs the network: a buyer's phone does
  // not download it with the app.
  if (f === "manifest.js") continue;
  if (f.endsWith(".js") || f.endsWith(".css")) precache.push({ url: `/assets/${f}`, revision: await revision(`assets/${f}`) });
}
await build({
  ...common,
  entryPoints: ["src/sw.ts"],
  outfile: "dist/sw.js",
  format: "iife",
  target: ["es2022", "chrome100", "safari15.4", "firefox100"],
  tsconfig: "tsconfig.sw.json",
  define: { "process.env.NODE_ENV": '"production"', "self.__WB_MANIFEST": JSON.stringify(precache) },
});

// app.js and what it imports statically, followed through the chunks: a
// chunk shared with a lazy page loads with app.js.
const firstLoad = new Set(["dist/assets/app.js"]);
for (const f of firstLoad) {
  for (const i of app.metafile.outputs[f]?.imports ?? []) {
    if (i.kind === "import-statement") firstLoad.add(i.path);
  }
}
let total = 0;
for (const f of ["index.html", ...[...firstLoad].map((f) => path.relative("dist", f)), "assets/app.css"]) {
  const body = await readFile(path.join(dist, f));
  const gz = gzipSync(body, { level: 9 }).length;
  total += gz;
  console.log(`${f.padEnd(16)} ${String(body.length).padStart(7)} B  ${String(gz).padStart(6)} B gzip`);
}
console.log(`first load       ${String(total).padStart(17)} B gzip (budget ${BUDGET_GZIP_BYTES})`);
{
  const body = await readFile(path.join(dist, "sw.js"));
  console.log(`${"sw.js".padEnd(16)} ${String(body.length).padStart(7)} B  ${String(gzipSync(body, { level: 9 }).length).padStart(6)} B gzip (after the first load, not in it)`);
}
if (total > BUDGET_GZIP_BYTES) {
  console.error(`web: the first load is ${total} B gzip, over the budget of ${BUDGET_GZIP_BYTES} B (decision 0160)`);
  process.exit(1);
}
