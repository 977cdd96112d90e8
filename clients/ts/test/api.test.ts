// End-to-end test of the TypeScript SDK against the real seatghor binary.
//
// Starts `seatghor dev` on a fresh data directory and a free port, mints
// tokens with `seatghor token`, and runs the same scenario over the Connect
// JSON and the Connect binary (Protobuf) encodings, then pays orders through
// the in-process sandbox gateway and over the REST routes. The SDK's own
// behaviour (both entry points, retries, typed errors, the packed tarball)
// runs against the same server: test/sdk-suite.ts.
//
// Binary: $SEATGHOR_BIN, default ../../bin/seatghor relative to clients/ts.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFile } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { timestampFromDate } from "@bufbuild/protobuf/wkt";

import {
  Code,
  ConnectError,
  FailureReason,
  IDEMPOTENCY_KEY_HEADER,
  OrderStatus,
  PaymentState,
  SeatState,
  ShowKind,
  createSeatghorClient,
  idempotent,
  newIdempotencyKey,
  seatStates,
  seatsUnavailable,
} from "../src/index.js";
import type { SeatghorClient } from "../src/index.js";
import { exampleSuite } from "./example-suite.js";
import { sdkSuite } from "./sdk-suite.js";

const execFileP = promisify(execFile);

// dist/test/api.test.js → clients/ts
const packageRoot = fileURLToPath(new URL("../../", import.meta.url));
const bin = process.env.SEATGHOR_BIN
  ? path.resolve(process.env.SEATGHOR_BIN)
  : path.resolve(packageRoot, "../../bin/seatghor");

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
// How long the seat-map projector may take to catch up with a write.
const PROJECTION_TIMEOUT_MS = 10_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      if (addr === null || typeof addr === "string") {
        srv.close();
        reject(new Error("no port"));
        return;
      }
      const port = addr.port;
      srv.close(() => resolve(port));
    });
  });
}

async function mintToken(sub: string, role?: string): Promise<string> {
  const args = ["token", "--sub", sub];
  if (role !== undefined) args.push("--role", role);
  const { stdout } = await execFileP(bin, args);
  const token = stdout.trim();
  assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, `token for ${sub}`);
  return token;
}

/** Starts `seatghor dev` and resolves with its base URL once it is serving. */
function startServer(proc: ChildProcess, logs: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => {
      done(new Error(`seatghor did not print "running at" within ${START_TIMEOUT_MS} ms\n${logs.join("")}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      logs.push(text);
      stdout += text;
      const m = /Seatghor is running at (http:\/\/\S+)/.exec(stdout);
      if (m) done(undefined, m[1]);
    };
    const onStderr = (chunk: Buffer) => logs.push(chunk.toString());
    const onExit = (code: number | null, signal: string | null) =>
      done(new Error(`seatghor exited early (code ${code}, signal ${signal})\n${logs.join("")}`));
    const onError = (err: Error) => done(err);
    let settled = false;
    function done(err?: Error, url?: string) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      proc.off("exit", onExit);
      proc.off("error", onError);
      if (err) reject(err);
      else resolve(url!);
    }
    proc.stdout!.on("data", onData);
    proc.stderr!.on("data", onStderr);
    proc.once("exit", onExit);
    proc.once("error", onError);
  });
}

function stopServer(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      // Did not stop cleanly in time; make sure it goes away.
      proc.kill("SIGKILL");
    }, STOP_TIMEOUT_MS);
    proc.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill("SIGINT");
  });
}

/**
 * Calls get until ok accepts its result and returns that result. For reads
 * of eventually consistent read models such as the seat map, which the
 * projector updates after the write (docs/decisions/0021, 0022).
 */
async function eventually<T>(get: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + PROJECTION_TIMEOUT_MS;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > deadline) assert.fail(`${what} within ${PROJECTION_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Holds seats of show 7 and creates an order from the hold; returns the order id. */
async function newOrder(client: SeatghorClient, seats: string[]): Promise<string> {
  const { hold } = await client.holds.createHold({ showId: 7n, seats }, idempotent());
  assert.ok(hold, "response has a hold");
  const { order } = await client.orders.createOrder({ holdId: hold.holdId }, idempotent());
  assert.ok(order, "response has an order");
  assert.equal(order.status, OrderStatus.PENDING_PAYMENT);
  return order.orderId;
}

/** Runs fn, which must fail, and returns its ConnectError. */
async function connectErrorOf(fn: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof ConnectError, `expected a ConnectError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected the call to fail");
}

describe("seatghor API", () => {
  let dataDir = "";
  let server: ChildProcess | undefined;
  let exitCode: number | null | undefined;
  const logs: string[] = [];
  let baseUrl = "";
  const tokens = { alice: "", bob: "", admin: "" };

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "seatghor-ts-test-"));
    const port = await freePort();
    server = spawn(bin, ["dev", "--data-dir", dataDir, "--addr", `127.0.0.1:${port}`], {
      stdio: ["ignore", "pipe", "pipe"],
      // The in-process sandbox gateway takes any free port, so parallel runs
      // never collide on its default 127.0.0.1:8081.
      env: { ...process.env, SEATGHOR_SANDBOX_ADDR: "127.0.0.1:0" },
    });
    server.once("exit", (code) => {
      exitCode = code;
    });
    baseUrl = await startServer(server, logs);
    assert.equal(baseUrl, `http://127.0.0.1:${port}`);
    [tokens.alice, tokens.bob, tokens.admin] = await Promise.all([
      mintToken("ts-alice"),
      mintToken("ts-bob"),
      mintToken("ts-admin", "admin"),
    ]);
  });

  after(async () => {
    if (server) {
      await stopServer(server);
      if (exitCode !== 0) {
        // Show the server's output when it did not stop cleanly.
        console.error(`seatghor exit code ${exitCode}\n${logs.join("")}`);
      }
    }
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  for (const binary of [false, true]) {
    const format = binary ? "binary" : "json";
    // Different seats per format: both formats share one server.
    const [s1, s2, s3] = binary ? ["C1", "C2", "C3"] : ["B1", "B2", "B3"];
    // Seats of the order whose payment is declined.
    const declineSeats = binary ? ["E1", "E2"] : ["D1", "D2"];

    describe(`Connect ${format}`, () => {
      const alice = () => createSeatghorClient({ baseUrl, token: tokens.alice, binary });
      const bob = () => createSeatghorClient({ baseUrl, token: tokens.bob, binary });
      const admin = () => createSeatghorClient({ baseUrl, token: tokens.admin, binary });

      const holdKey = newIdempotencyKey();
      let holdId = "";
      let orderId = "";
      const paymentKey = newIdempotencyKey();
      let paymentId = "";

      test("GetSeatMap of show 7", async () => {
        const map = await alice().seatMap.getSeatMap({ showId: 7n });
        assert.equal(map.showId, 7n);
        assert.equal(map.currency, "BDT");
        assert.equal(map.seatCount, 40);
        assert.equal(map.sections.length, 1);
        const [main] = map.sections;
        assert.equal(main.name, "Main");
        assert.equal(main.priceMinor, 85000n);
        assert.deepEqual(
          main.rows.map((r) => r.label),
          ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"],
        );
        assert.deepEqual(main.rows[0].seats, ["A1", "A2", "A3", "A4"]);
        assert.deepEqual(main.rows[9].seats, ["J1", "J2", "J3", "J4"]);
        assert.equal(map.availability.length, 10, "2 bits per seat");
        const states = seatStates(map);
        assert.equal(states.size, 40);
        assert.equal(states.get(s1), SeatState.AVAILABLE_UNSPECIFIED);
        assert.equal(states.get(s2), SeatState.AVAILABLE_UNSPECIFIED);
      });

      test(`CreateHold of ${s1},${s2}`, async () => {
        const before = await alice().seatMap.getSeatMap({ showId: 7n });
        const { hold } = await alice().holds.createHold({ showId: 7n, seats: [s1, s2] }, idempotent(holdKey));
        assert.ok(hold, "response has a hold");
        assert.ok(hold.holdId.startsWith("hld_7_"), `hold id ${hold.holdId}`);
        assert.equal(hold.showId, 7n);
        assert.deepEqual(hold.seats, [s1, s2]);
        assert.equal(hold.quantity, 2);
        assert.equal(hold.amount?.currency, "BDT");
        assert.equal(hold.amount?.amountMinor, 170000n);
        assert.equal(hold.userId, "ts-alice");
        holdId = hold.holdId;

        // The seat map is a read model: the projector updates it shortly after.
        // Wait for the hold itself, not just any newer version: the map read
        // before the hold may itself have been a little behind.
        const afterMap = await eventually(
          () => alice().seatMap.getSeatMap({ showId: 7n }),
          (m) => m.version > before.version && seatStates(m).get(s1) === SeatState.HELD,
          "the hold shows in the seat map",
        );
        const states = seatStates(afterMap);
        assert.equal(states.get(s1), SeatState.HELD);
        assert.equal(states.get(s2), SeatState.HELD);
        assert.equal(states.get(s3), SeatState.AVAILABLE_UNSPECIFIED);
      });

      test(`a second user asking for ${s2} is refused with SeatsUnavailable`, async () => {
        const err = await connectErrorOf(() =>
          bob().holds.createHold({ showId: 7n, seats: [s2, s3] }, idempotent()),
        );
        assert.equal(err.code, Code.Aborted, err.message);
        const detail = seatsUnavailable(err);
        assert.ok(detail, "SeatsUnavailable detail present");
        assert.ok(detail.seats.includes(s2), `seats ${detail.seats.join(",")} include ${s2}`);
        assert.ok(!detail.seats.includes(s3), `${s3} is free`);
        assert.ok(detail.seatmapVersion > 0n, "seat-map version set");
        // All or nothing: s3 must still be free.
        const states = seatStates(await bob().seatMap.getSeatMap({ showId: 7n }));
        assert.equal(states.get(s3), SeatState.AVAILABLE_UNSPECIFIED);
      });

      test("CreateOrder from the hold", async () => {
        const { order } = await alice().orders.createOrder({ holdId }, idempotent());
        assert.ok(order, "response has an order");
        assert.equal(order.status, OrderStatus.PENDING_PAYMENT);
        assert.equal(order.holdId, holdId);
        assert.equal(order.showId, 7n);
        assert.equal(order.total?.currency, "BDT");
        assert.equal(order.total?.amountMinor, 170000n);
        orderId = order.orderId;
      });

      test("repeating CreateHold with the same Idempotency-Key returns the same hold", async () => {
        const { hold } = await alice().holds.createHold({ showId: 7n, seats: [s1, s2] }, idempotent(holdKey));
        assert.equal(hold?.holdId, holdId);
      });

      test("admin CreateShow of a bus trip", async () => {
        const startsAt = new Date(Date.now() + 45 * 24 * 3600 * 1000);
        const { show } = await admin().catalog.createShow(
          {
            kind: ShowKind.BUS_TRIP,
            title: `Dhaka to Rajshahi (${format})`,
            origin: "Dhaka",
            destination: "Rajshahi",
            startsAt: timestampFromDate(startsAt),
            currency: "BDT",
            sections: [{ name: "Main", rows: ["A", "B", "C"], seatsPerRow: 4, priceMinor: 90000n }],
          },
          idempotent(),
        );
        assert.ok(show, "response has a show");
        assert.ok(show.showId > 0n, `show id ${show.showId}`);
        assert.equal(show.kind, ShowKind.BUS_TRIP);
        assert.equal(show.seatCount, 12);

        const map = await alice().seatMap.getSeatMap({ showId: show.showId });
        assert.equal(map.seatCount, 12);
      });

      test("StartPayment of the order with the sandbox's tok_success", async () => {
        const { payment } = await alice().payments.startPayment(
          { orderId, sandbox: { token: "tok_success" } },
          idempotent(paymentKey),
        );
        assert.ok(payment, "response has a payment");
        assert.ok(payment.paymentId !== "", "payment id set");
        assert.equal(payment.orderId, orderId);
        assert.equal(payment.showId, 7n);
        assert.equal(payment.userId, "ts-alice");
        assert.equal(payment.status, PaymentState.SUCCEEDED);
        assert.equal(payment.failureReason, FailureReason.UNSPECIFIED);
        assert.equal(payment.amount?.currency, "BDT");
        assert.equal(payment.amount?.amountMinor, 170000n);
        paymentId = payment.paymentId;
      });

      test("repeating StartPayment with the same Idempotency-Key returns the same payment", async () => {
        const { payment } = await alice().payments.startPayment(
          { orderId, sandbox: { token: "tok_success" } },
          idempotent(paymentKey),
        );
        assert.equal(payment?.paymentId, paymentId);
        assert.equal(payment?.status, PaymentState.SUCCEEDED);
      });

      test("GetPayment and GetOrder after the payment", async () => {
        const { payment } = await alice().payments.getPayment({ paymentId });
        assert.equal(payment?.paymentId, paymentId);
        assert.equal(payment?.status, PaymentState.SUCCEEDED);
        const { order } = await alice().orders.getOrder({ orderId });
        assert.equal(order?.status, OrderStatus.CONFIRMED);
      });

      test("GetPayment of another user's payment is NOT_FOUND", async () => {
        const err = await connectErrorOf(() => bob().payments.getPayment({ paymentId }));
        assert.equal(err.code, Code.NotFound, err.message);
      });

      test("a declined payment (tok_decline) leaves the order PENDING_PAYMENT", async () => {
        const declinedOrderId = await newOrder(alice(), declineSeats);
        const { payment } = await alice().payments.startPayment(
          { orderId: declinedOrderId, sandbox: { token: "tok_decline" } },
          idempotent(),
        );
        assert.ok(payment, "response has a payment");
        assert.equal(payment.orderId, declinedOrderId);
        assert.equal(payment.status, PaymentState.FAILED);
        assert.equal(payment.failureReason, FailureReason.DECLINED);
        const { order } = await alice().orders.getOrder({ orderId: declinedOrderId });
        assert.equal(order?.status, OrderStatus.PENDING_PAYMENT);
      });

      test("admin GetTrialBalance: the books balance", async () => {
        const tb = await admin().ledger.getTrialBalance({});
        assert.equal(tb.sumMinor, 0n);
        assert.equal(tb.unbalancedJournals, 0);
        assert.equal(tb.balanced, true);
        const clearing = tb.accounts.find((a) => a.account === "gateway_clearing");
        assert.ok(clearing, `accounts ${tb.accounts.map((a) => a.account).join(",")} include gateway_clearing`);
        assert.equal(clearing.currency, "BDT");
        assert.ok((clearing.balanceMinor ?? 0n) > 0n, `gateway_clearing balance ${clearing.balanceMinor}`);
      });

      test("GetTrialBalance of a non-admin is PERMISSION_DENIED", async () => {
        const err = await connectErrorOf(() => alice().ledger.getTrialBalance({}));
        assert.equal(err.code, Code.PermissionDenied, err.message);
      });
    });
  }

  // The SDK's own behaviour over both entry points (test/sdk-suite.ts).
  sdkSuite(() => ({ baseUrl, bin, tokens }));

  // examples/reseller.ts, a partner's program (test/example-suite.ts).
  exampleSuite(() => ({ baseUrl, tokens }));

  describe("REST", () => {
    let orderId = "";
    let paymentId = "";

    before(async () => {
      orderId = await newOrder(createSeatghorClient({ baseUrl, token: tokens.alice }), ["F1", "F2"]);
    });

    test("POST /v1/payments with the sandbox's tok_success", async () => {
      const res = await fetch(`${baseUrl}/v1/payments`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${tokens.alice}`,
          [IDEMPOTENCY_KEY_HEADER]: newIdempotencyKey(),
          "Content-Type": "application/json",
        },
        body: JSON.stringify({ order_id: orderId, sandbox: { token: "tok_success" } }),
      });
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(typeof body.payment_id, "string");
      assert.ok(body.payment_id !== "", "payment_id set");
      assert.equal(body.order_id, orderId);
      assert.equal(body.status, "PAYMENT_STATE_SUCCEEDED");
      paymentId = body.payment_id as string;
    });

    test("GET /v1/payments/{payment_id}", async () => {
      const res = await fetch(`${baseUrl}/v1/payments/${encodeURIComponent(paymentId)}`, {
        headers: { Authorization: `Bearer ${tokens.alice}` },
      });
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.payment_id, paymentId);
      assert.equal(body.status, "PAYMENT_STATE_SUCCEEDED");
    });
  });
});
