// The client's retries against a local stub server, over both entry points
// (connect-node, and connect-web on Node's fetch). Only the faults come from
// the stub: seatghor itself does not answer "unavailable" or "still running"
// on demand. What the real server does with a repeated key is tested in
// api.test.ts. Also checks the SDK's reasons against docs/errors.md.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

import { create, toBinary, toJson, fromJson } from "@bufbuild/protobuf";
import type { JsonValue } from "@bufbuild/protobuf";

import * as browserEntry from "../src/browser.js";
import * as nodeEntry from "../src/node.js";
import {
  Code,
  ConnectError,
  CreateHoldRequestSchema,
  CreateHoldResponseSchema,
  ERROR_REASONS,
  ErrorInfoSchema,
  IDEMPOTENCY_KEY_HEADER,
  RetryInfoSchema,
  StillRunningError,
} from "../src/index.js";
import type { RetryEvent, SeatghorClient, SeatghorClientOptions } from "../src/index.js";

const CREATE_HOLD = "/seatghor.booking.v1.HoldService/CreateHold";
const GET_SEAT_MAP = "/seatghor.seatmap.v1.SeatMapService/GetSeatMap";

/** One answer of the stub: an error (Connect's JSON error body) or a hold. */
type Answer =
  | { error: { status: number; code: string; headers?: Record<string, string>; details?: Uint8Array[] } }
  | { hold: string };

interface Seen {
  method: string;
  path: string;
  key: string | undefined;
}

/** A Connect JSON stub: answers each request with the next scripted answer. */
class Stub {
  server: Server;
  script: Answer[] = [];
  seen: Seen[] = [];
  url = "";

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = fromJson(CreateHoldRequestSchema, JSON.parse(Buffer.concat(chunks).toString() || "{}") as JsonValue);
    const key = req.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
    // A read comes as GET, its request in the query (useHttpGet): the
    // procedure is the path.
    const path = (req.url ?? "").split("?")[0];
    this.seen.push({ method: req.method ?? "", path, key: typeof key === "string" ? key : undefined });
    const answer = this.script.shift() ?? { error: { status: 500, code: "internal" } };
    if ("error" in answer) {
      const { status, code, headers = {}, details = [] } = answer.error;
      res.writeHead(status, { "Content-Type": "application/json", ...headers });
      res.end(
        JSON.stringify({
          code,
          message: `stub: ${code}`,
          details: details.map((value, i) => ({
            type: i === 0 ? "google.rpc.ErrorInfo" : "google.rpc.RetryInfo",
            value: Buffer.from(value).toString("base64").replace(/=+$/, ""),
          })),
        }),
      );
      return;
    }
    const out = create(CreateHoldResponseSchema, {
      hold: { holdId: answer.hold, showId: body.showId, seats: body.seats, quantity: body.seats.length },
    });
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(toJson(CreateHoldResponseSchema, out)));
  }
}

const errorInfo = (reason: string) =>
  toBinary(ErrorInfoSchema, create(ErrorInfoSchema, { reason, domain: "seatghor.com" }));
const retryInfo = (seconds: bigint, nanos: number) =>
  toBinary(RetryInfoSchema, create(RetryInfoSchema, { retryDelay: { seconds, nanos } }));

const entries: [string, (o: SeatghorClientOptions) => SeatghorClient][] = [
  ["connect-node", nodeEntry.createSeatghorClient],
  ["connect-web", browserEntry.createSeatghorClient],
];

describe("stub server", () => {
  const stub = new Stub();
  before(() => stub.start());
  after(() => new Promise<void>((resolve) => stub.server.close(() => resolve())));

  for (const [transport, createSeatghorClient] of entries) {
    describe(transport, () => {
      /** A client that records the waits it is asked for instead of waiting. */
      function client(retry: { maxAttempts?: number; maxDelayMs?: number } = {}) {
        const waits: number[] = [];
        const events: RetryEvent[] = [];
        const sg = createSeatghorClient({
          baseUrl: stub.url,
          token: "t",
          retry: {
            ...retry,
            onRetry: (e) => events.push(e),
            sleep: async (ms) => {
              waits.push(ms);
            },
          },
        });
        stub.seen = [];
        return { sg, waits, events };
      }

      test("a retry after unavailable waits the Retry-After and sends the same Idempotency-Key", async () => {
        const { sg, waits, events } = client();
        stub.script = [
          { error: { status: 503, code: "unavailable", headers: { "Retry-After": "2" } } },
          { hold: "hld_1_a" },
        ];
        const { hold } = await sg.holds.createHold({ showId: 1n, seats: ["A1"] });
        assert.equal(hold?.holdId, "hld_1_a");
        assert.deepEqual(waits, [2000], "waited what Retry-After said");
        assert.equal(events[0].fromServer, true);
        assert.equal(stub.seen.length, 2);
        assert.deepEqual(stub.seen.map((s) => s.method), ["POST", "POST"], "a write is a POST");
        assert.ok(stub.seen[0].key, "the first attempt carries a key");
        assert.equal(stub.seen[1].key, stub.seen[0].key, "the retry reuses it");
        assert.equal(events[0].idempotencyKey, stub.seen[0].key);
      });

      test("a call still running (IDEMPOTENCY_KEY_IN_PROGRESS) is retried after its RetryInfo, same key", async () => {
        const { sg, waits } = client();
        stub.script = [
          { error: { status: 409, code: "aborted", details: [errorInfo("IDEMPOTENCY_KEY_IN_PROGRESS"), retryInfo(1n, 500_000_000)] } },
          { error: { status: 409, code: "aborted", details: [errorInfo("IDEMPOTENCY_KEY_IN_PROGRESS")] } },
          { hold: "hld_1_b" },
        ];
        const { hold } = await sg.holds.createHold({ showId: 1n, seats: ["A2"] });
        assert.equal(hold?.holdId, "hld_1_b");
        assert.equal(waits.length, 2);
        assert.equal(waits[0], 1500, "RetryInfo's delay");
        assert.ok(waits[1] > 0 && waits[1] <= 500, `backoff ${waits[1]} ms when the server names no delay`);
        assert.equal(new Set(stub.seen.map((s) => s.key)).size, 1, "one key for the three attempts");
      });

      test("two logical calls send two keys", async () => {
        const { sg } = client();
        stub.script = [{ hold: "hld_1_c" }, { hold: "hld_1_d" }];
        await sg.holds.createHold({ showId: 1n, seats: ["A3"] });
        await sg.holds.createHold({ showId: 1n, seats: ["A4"] });
        assert.equal(stub.seen.length, 2);
        assert.notEqual(stub.seen[0].key, stub.seen[1].key);
      });

      test("a read carries no Idempotency-Key and is retried after unavailable", async () => {
        const { sg, waits } = client();
        stub.script = [{ error: { status: 503, code: "unavailable", headers: { "Retry-After": "1" } } }];
        // The second answer is the stub's default (internal): not retried.
        const err = await sg.seatMap.getSeatMap({ showId: 1n }).then(
          () => assert.fail("expected an error"),
          (e: unknown) => e,
        );
        assert.ok(err instanceof ConnectError);
        assert.equal(err.code, Code.Internal);
        assert.deepEqual(waits, [1000]);
        assert.deepEqual(
          stub.seen.map((s) => [s.method, s.path, s.key]),
          [
            ["GET", GET_SEAT_MAP, undefined],
            ["GET", GET_SEAT_MAP, undefined],
          ],
          "a read is a GET (the seat map's fast path, decision 0274)",
        );
      });

      test("when the retries run out the caller gets the typed StillRunningError", async () => {
        const { sg, waits } = client({ maxAttempts: 2 });
        const inProgress: Answer = {
          error: { status: 409, code: "aborted", details: [errorInfo("IDEMPOTENCY_KEY_IN_PROGRESS"), retryInfo(0n, 200_000_000)] },
        };
        stub.script = [inProgress, inProgress];
        const err = await sg.holds.createHold({ showId: 1n, seats: ["B1"] }).then(
          () => assert.fail("expected an error"),
          (e: unknown) => e,
        );
        assert.ok(err instanceof StillRunningError, `got ${String(err)}`);
        assert.ok(err instanceof ConnectError, "still a ConnectError");
        assert.equal(err.reason, "IDEMPOTENCY_KEY_IN_PROGRESS");
        assert.equal(err.code, Code.Aborted);
        assert.equal(err.retryDelayMs, 200);
        assert.deepEqual(waits, [200]);
        assert.equal(stub.seen.length, 2);
      });

      test("a Retry-After longer than maxDelayMs is not waited for", async () => {
        const { sg, waits } = client({ maxDelayMs: 5_000 });
        stub.script = [{ error: { status: 503, code: "unavailable", headers: { "Retry-After": "60" } } }];
        const err = await sg.holds.createHold({ showId: 1n, seats: ["B2"] }).then(
          () => assert.fail("expected an error"),
          (e: unknown) => e,
        );
        assert.ok(err instanceof ConnectError);
        assert.equal(err.code, Code.Unavailable);
        assert.deepEqual(waits, []);
        assert.equal(stub.seen.length, 1);
        assert.equal(stub.seen[0].path, CREATE_HOLD);
      });
    });
  }

  test("connect-web: a refused connection is unavailable and retried", async () => {
    // A port nobody listens on: the stub's, after closing a second server on it.
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, "127.0.0.1", resolve));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    const waits: number[] = [];
    const sg = browserEntry.createSeatghorClient({
      baseUrl: `http://127.0.0.1:${port}`,
      retry: { maxAttempts: 3, sleep: async (ms) => void waits.push(ms) },
    });
    const err = await sg.seatMap.getSeatMap({ showId: 1n }).then(
      () => assert.fail("expected an error"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ConnectError, String(err));
    assert.equal(err.code, Code.Unavailable);
    assert.equal(waits.length, 2, "two retries, then the error");
  });
});

test("the SDK knows every reason of docs/errors.md, and no other", async () => {
  const doc = await readFile(fileURLToPath(new URL("../../../../docs/errors.md", import.meta.url)), "utf8");
  const documented = new Set<string>();
  for (const line of doc.split("\n")) {
    const m = /^\| `[a-z_]+` \| \d+ \| `([A-Z0-9_]+)` \|/.exec(line);
    if (m) documented.add(m[1]);
  }
  assert.ok(documented.size > 40, `read ${documented.size} reasons from docs/errors.md`);
  assert.deepEqual([...new Set(ERROR_REASONS)].sort(), [...documented].sort());
  assert.equal(new Set(ERROR_REASONS).size, ERROR_REASONS.length, "each reason once");
});

test("the browser entry point imports nothing of Node", async () => {
  // Walks the compiled browser entry's relative imports (dist/src).
  const seen = new Set<string>();
  const outside = new Set<string>();
  const walk = async (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = await readFile(file, "utf8");
    for (const m of text.matchAll(/^(?:import|export)[^;]*? from "([^"]+)";/gms)) {
      if (m[1].startsWith(".")) await walk(fileURLToPath(new URL(m[1], `file://${file}`)));
      else outside.add(m[1]);
    }
  };
  await walk(fileURLToPath(new URL("../src/browser.js", import.meta.url)));
  assert.ok(seen.size > 5, `walked ${seen.size} files`);
  assert.ok(outside.has("@connectrpc/connect-web"), [...outside].join(", "));
  for (const dep of outside) {
    assert.ok(!dep.startsWith("node:") && dep !== "@connectrpc/connect-node", `browser entry imports ${dep}`);
  }
});
