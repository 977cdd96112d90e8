// @seatghor/client for tools that read `main` rather than `exports`: the
// Node entry point. Bundlers and runtimes that honour `exports` get
// ./browser.js or ./node.js by condition.
export * from "./node.js";
