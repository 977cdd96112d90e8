// The package's surface covers the APIs (decision 0327): every service of
// proto/ is a field of the client, and every message, enum and service is
// exported by both entry points, since "exports" opens no deeper path.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import type { DescEnum, DescMessage, DescService } from "@bufbuild/protobuf";

import * as browserEntry from "../src/browser.js";
import * as nodeEntry from "../src/node.js";

// dist/test/exports.test.js → dist/src/gen/seatghor, clients/ts
const genDir = fileURLToPath(new URL("../src/gen/seatghor/", import.meta.url));
const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

type Desc = DescMessage | DescEnum | DescService;

/** The generated descriptors of the Seatghor APIs, by export name. */
async function generated(): Promise<Map<string, Desc>> {
  const files = (await readdir(genDir, { recursive: true })).filter((f) => f.endsWith("_pb.js"));
  assert.ok(files.length >= 12, `generated files: ${files.join(", ")}`);
  const out = new Map<string, Desc>();
  for (const f of files) {
    const mod = (await import(pathToFileURL(path.join(genDir, f)).href)) as Record<string, unknown>;
    for (const [name, v] of Object.entries(mod)) {
      const kind = (v as { kind?: unknown } | null)?.kind;
      if (kind === "message" || kind === "enum" || kind === "service") out.set(`${f}:${name}`, v as Desc);
    }
  }
  return out;
}

const entries: [string, Record<string, unknown>, (o: { baseUrl: string }) => unknown][] = [
  ["node", nodeEntry, nodeEntry.createSeatghorClient],
  ["browser", browserEntry, browserEntry.createSeatghorClient],
];

describe("the package's surface", () => {
  for (const [name, entry, createSeatghorClient] of entries) {
    test(`the ${name} client has a field for every service`, async () => {
      const client = createSeatghorClient({ baseUrl: "http://127.0.0.1:1" }) as Record<string, Record<string, unknown>>;
      const services = [...(await generated()).values()].filter((d): d is DescService => d.kind === "service");
      assert.ok(services.some((s) => s.typeName === "seatghor.partner.v1.WebhookService"));
      // The README lists the client's fields, so it says what it covers.
      const readme = await readFile(path.join(packageRoot, "README.md"), "utf8");
      for (const k of Object.keys(client)) assert.ok(readme.includes(`\`${k}\``), `README.md does not name ${k}`);
      for (const s of services) {
        const methods = s.methods.map((m) => m.localName).sort();
        const field = Object.keys(client).find(
          (k) => JSON.stringify(Object.keys(client[k]).sort()) === JSON.stringify(methods),
        );
        assert.ok(field, `no field of the client calls ${s.typeName}`);
      }
    });

    test(`the ${name} entry exports every message, enum and service`, async () => {
      // catalog and seatmap both name Section and GaArea: the seat map's are
      // in the seatmap namespace; the reasons' declaration is in reasonspec.
      const seatmap = entry.seatmap as Record<string, unknown>;
      const reasonspec = entry.reasonspec as Record<string, unknown>;
      const exported = new Set([...Object.values(entry), ...Object.values(seatmap), ...Object.values(reasonspec)]);
      const missing = [...(await generated())].filter(([, d]) => !exported.has(d)).map(([n]) => n);
      assert.deepEqual(missing, []);
    });
  }
});
