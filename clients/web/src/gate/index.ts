// The gate's offline side (docs/gate-offline.md): the engine, its panel and
// their words. Built apart from the page's bundle into assets/gate.js
// (build.mjs), which the gate page loads when it opens: no code is shared
// with the page, so the buyer's first load stays one file and carries none
// of it. The page passes in what it needs to share (the API client, how to
// read its errors).
export { GateEngine } from "./engine.js";
export type { ErrorKinds, OfflineVerdict } from "./engine.js";
export { clockSeconds, digits, renderPanel } from "./panel.js";
export type { PanelProps } from "./panel.js";
export { gateStrings } from "./strings.js";
