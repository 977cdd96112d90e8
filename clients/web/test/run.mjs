// Runs the site's unit tests (test/*.test.ts) with Node's test runner:
// esbuild bundles each into a temporary directory (the sources import
// "./x.js" for x.ts, which Node does not read), then `node --test` runs
// them. `npm test` in clients/web.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { noValidationRules } from "../novalidate.mjs";

const root = path.dirname(fileURLToPath(import.meta.url));
const out = await mkdtemp(path.join(tmpdir(), "seatghor-web-test-"));
try {
  const tests = (await readdir(root)).filter((f) => f.endsWith(".test.ts")).map((f) => path.join(root, f));
  await build({ entryPoints: tests, outdir: out, outExtension: { ".js": ".mjs" }, bundle: true, platform: "node",
    format: "esm", target: "node20", logLevel: "warning", plugins: [noValidationRules],
    // A test of the generated code imports the protobuf runtime the SDK has.
    nodePaths: [path.join(root, "../../ts/node_modules")] });
  const files = (await readdir(out)).map((f) => path.join(out, f));
  const r = spawnSync(process.execPath, ["--test", ...files], { stdio: "inherit" });
  process.exitCode = r.status ?? 1;
} finally {
  await rm(out, { recursive: true, force: true });
}
