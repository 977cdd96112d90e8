// An esbuild plugin for every bundle of the site (build.mjs) and its unit
// tests (test/run.mjs): the generated code of buf/validate/validate.proto is
// replaced by the SDK's src/novalidate.ts, an empty file of the same name (decision
// 0470). Every generated file whose proto has validation rules imports
// validate.proto's descriptor (70 KB of it, 12 KB gzip, in the buyer's first
// load) only so that its own descriptor can name it as a dependency; the
// site never reads a rule (the server checks them), and a rule's options stay
// in each descriptor as unknown fields.
import path from "node:path";
import { fileURLToPath } from "node:url";

const standIn = path.join(path.dirname(fileURLToPath(import.meta.url)), "../ts/src/novalidate.ts");

export const noValidationRules = {
  name: "no-validation-rules",
  setup(b) {
    b.onResolve({ filter: /\/buf\/validate\/validate_pb\.js$/ }, () => ({ path: standIn }));
  },
};
