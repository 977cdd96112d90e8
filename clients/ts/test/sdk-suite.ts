// The SDK's behaviour against the real `seatghor dev` that api.test.ts
// starts, over both entry points: connect-node (src/node.ts) and the
// browser's connect-web over fetch (src/browser.ts, on Node's fetch). Then
// the packed tarball, installed in a fresh project and used from there.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { equals } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";

import * as browserEntry from "../src/browser.js";
import * as nodeEntry from "../src/node.js";
import {
  Code,
  ConnectError,
  CreateHoldResponseSchema,
  IDEMPOTENCY_KEY_HEADER,
  InvalidRequestError,
  OrderStatus,
  PaymentState,
  QueueTokenError,
  SeatghorError,
  SeatsUnavailableError,
  ShowKind,
  TicketStatus,
  asSeatghorError,
  hasReason,
  withQueueToken,
} from "../src/index.js";
import type { CreateHoldResponse, Interceptor, SeatghorClient, SeatghorClientOptions } from "../src/index.js";

const execFileP = promisify(execFile);
// dist/test/sdk-suite.js → clients/ts
const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

interface Server {
  baseUrl: string;
  bin: string;
  tokens: { alice: string; bob: string; admin: string };
}

const PROJECTION_TIMEOUT_MS = 10_000;

async function eventually<T>(get: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + PROJECTION_TIMEOUT_MS;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > deadline) assert.fail(`${what} within ${PROJECTION_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => assert.fail("expected the call to fail"),
    (err: unknown) => err,
  );
}

/** A 12-seat bus trip (rows A–C, 4 seats) created by the admin; its id. */
async function newShow(admin: SeatghorClient, title: string, extra: { onSaleAt?: Date; waitingRoom?: boolean } = {}) {
  const { show } = await admin.catalog.createShow({
    kind: ShowKind.BUS_TRIP,
    title,
    origin: "Dhaka",
    destination: "Sylhet",
    startsAt: timestampFromDate(new Date(Date.now() + 30 * 24 * 3600 * 1000)),
    currency: "BDT",
    sections: [{ name: "Main", rows: ["A", "B", "C"], seatsPerRow: 4, priceMinor: 75000n }],
    ...(extra.onSaleAt ? { onSaleAt: timestampFromDate(extra.onSaleAt) } : {}),
    ...(extra.waitingRoom ? { waitingRoom: { enabled: true } } : {}),
  });
  assert.ok(show, "response has a show");
  return show.showId;
}

export function sdkSuite(server: () => Server): void {
  const entries: [string, (o: SeatghorClientOptions) => SeatghorClient][] = [
    ["connect-node", nodeEntry.createSeatghorClient],
    ["connect-web", browserEntry.createSeatghorClient],
  ];
  for (const [transport, createSeatghorClient] of entries) {
    describe(`SDK over ${transport}`, () => {
      const client = (token: string, more: Partial<SeatghorClientOptions> = {}) =>
        createSeatghorClient({ baseUrl: server().baseUrl, token, ...more });
      // Buyers of their own: holds are rate limited per caller.
      const users = { buyer: "", rival: "" };
      const alice = () => client(users.buyer);
      const bob = () => client(users.rival);
      let showId = 0n;

      before(async () => {
        [users.buyer, users.rival] = await Promise.all(
          ["buyer", "rival"].map(async (who) =>
            (await execFileP(server().bin, ["token", "--sub", `sdk-${transport}-${who}`])).stdout.trim(),
          ),
        );
        // No Idempotency-Key passed: the client adds one to the write.
        showId = await newShow(client(server().tokens.admin), `SDK ${transport}`);
      });

      test("a purchase: hold, order, pay with tok_success, two tickets", async () => {
        const { hold } = await alice().holds.createHold({ showId, seats: ["A1", "A2"] });
        assert.ok(hold, "a hold");
        assert.deepEqual(hold.seats, ["A1", "A2"]);
        const { order } = await alice().orders.createOrder({ holdId: hold.holdId });
        assert.equal(order?.status, OrderStatus.PENDING_PAYMENT);
        const { payment } = await alice().payments.startPayment({
          orderId: order!.orderId,
          sandbox: { token: "tok_success" },
        });
        assert.equal(payment?.status, PaymentState.SUCCEEDED);
        assert.equal((await alice().orders.getOrder({ orderId: order!.orderId })).order?.status, OrderStatus.CONFIRMED);
        const { tickets } = await eventually(
          () => alice().tickets.listMyTickets({ showId }),
          (r) => r.tickets.length === 2,
          "two tickets issued",
        );
        assert.deepEqual(tickets.map((t) => t.seat).sort(), ["A1", "A2"]);
        for (const t of tickets) {
          assert.equal(t.orderId, order!.orderId);
          assert.equal(t.status, TicketStatus.VALID);
          assert.ok(t.code !== "", "the ticket has its QR code's text");
          assert.equal(t.price?.amountMinor, 75000n);
        }
      });

      test("a retried CreateHold reuses its key: the server answers the same hold twice", async () => {
        // The first answer is lost on its way back (this interceptor runs
        // inside the client's retries and turns it into "unavailable"); the
        // client retries with the same Idempotency-Key and the server
        // replays its first answer instead of holding again.
        const keys: string[] = [];
        const answers: CreateHoldResponse[] = [];
        const loseFirstAnswer: Interceptor = (next) => async (req) => {
          keys.push(req.header.get(IDEMPOTENCY_KEY_HEADER) ?? "");
          const res = await next(req);
          answers.push(res.message as CreateHoldResponse);
          if (answers.length === 1) throw new ConnectError("answer lost", Code.Unavailable);
          return res;
        };
        const waits: number[] = [];
        const sg = client(users.buyer, {
          interceptors: [loseFirstAnswer],
          retry: { sleep: async (ms) => void waits.push(ms) },
        });
        const { hold } = await sg.holds.createHold({ showId, seats: ["B1", "B2"] });
        assert.equal(waits.length, 1, "one retry");
        assert.equal(keys.length, 2);
        assert.ok(keys[0] !== "", "the client made a key");
        assert.equal(keys[1], keys[0], "the retry sent the same key");
        assert.equal(answers.length, 2);
        assert.ok(equals(CreateHoldResponseSchema, answers[0], answers[1]), "the same answer twice");
        assert.equal(hold?.holdId, answers[0].hold?.holdId);
        // A new logical call (a new key) for the same seats is a new hold,
        // refused: the seats are the one hold's.
        const err = await rejection(alice().holds.createHold({ showId, seats: ["B1", "B2"] }));
        assert.ok(err instanceof SeatsUnavailableError, String(err));
      });

      test("SEATS_UNAVAILABLE is a SeatsUnavailableError with the seats and the seat-map version", async () => {
        await alice().holds.createHold({ showId, seats: ["C1"] });
        const err = await rejection(bob().holds.createHold({ showId, seats: ["C1", "C2"] }));
        assert.ok(err instanceof SeatsUnavailableError, String(err));
        assert.ok(err instanceof SeatghorError);
        assert.ok(err instanceof ConnectError, "still a ConnectError");
        assert.equal(err.code, Code.Aborted);
        assert.equal(err.reason, "SEATS_UNAVAILABLE");
        assert.deepEqual(err.seats, ["C1"]);
        assert.ok(err.seatmapVersion > 0n, `seat-map version ${err.seatmapVersion}`);
        assert.ok(hasReason(err, "SEATS_UNAVAILABLE"));
        // The discriminated union: the reason narrows to the class.
        const known = asSeatghorError(err);
        assert.ok(known);
        switch (known.reason) {
          case "SEATS_UNAVAILABLE":
            assert.deepEqual(known.seats, ["C1"]);
            break;
          default:
            assert.fail(`reason ${known.reason}`);
        }
      });

      test("a bad seat is an InvalidRequestError naming the field (BadRequest)", async () => {
        const err = await rejection(alice().holds.createHold({ showId, seats: ["C3", "c4"] }));
        assert.ok(err instanceof InvalidRequestError, String(err));
        assert.equal(err.code, Code.InvalidArgument);
        assert.equal(err.reason, "INVALID_ARGUMENT");
        const v = err.field("seats[1]");
        assert.ok(v, `violations ${JSON.stringify(err.fieldViolations)}`);
        assert.equal(v.reason, "string.pattern");
        assert.ok(!(err instanceof SeatsUnavailableError));

        const unknownSeat = await rejection(alice().holds.createHold({ showId, seats: ["Z9"] }));
        assert.ok(unknownSeat instanceof InvalidRequestError, String(unknownSeat));
        assert.equal(unknownSeat.reason, "BOOKING_INVALID");
        assert.ok(unknownSeat.field("seats"), JSON.stringify(unknownSeat.fieldViolations));
      });

      test("a show behind a waiting room: QueueTokenError without a token, a hold with the admitted one", async () => {
        const admin = client(server().tokens.admin);
        const queued = await newShow(admin, `SDK queue ${transport}`, {
          onSaleAt: new Date(Date.now() - 1000),
          waitingRoom: true,
        });
        const err = await rejection(alice().holds.createHold({ showId: queued, seats: ["A1"] }));
        assert.ok(err instanceof QueueTokenError, String(err));
        assert.equal(err.reason, "QUEUE_TOKEN_REQUIRED");
        assert.equal(err.code, Code.PermissionDenied);

        const joined = await alice().waitingRoom.join({ showId: queued });
        assert.ok(joined.token !== "", "a queue token");
        const status = await eventually(
          () => alice().waitingRoom.getStatus({ token: joined.token }),
          (s) => s.admitted && s.admittedToken !== "",
          "admitted",
        );
        const { hold } = await alice().holds.createHold(
          { showId: queued, seats: ["A1"] },
          withQueueToken(status.admittedToken),
        );
        assert.deepEqual(hold?.seats, ["A1"]);
      });
    });
  }

  // Packing and installing take seconds of npm: start at once, while the
  // server starts and the other tests run.
  const app = packedApp();
  app.catch(() => {}); // reported by the test below

  describe("npm pack", () => {
    test("the tarball installs in a fresh project, which uses it from Node and with the browser condition", async () => {
      const { dir, files } = await app;
      try {
        assert.ok(files.includes("package/dist/src/browser.js"), files.join("\n"));
        assert.ok(files.includes("package/dist/src/node.d.ts"), files.join("\n"));
        assert.ok(files.includes("package/LICENSE"), files.join("\n"));
        assert.ok(!files.some((f) => f.startsWith("package/dist/test/")), "no tests in the package");
        const env = { ...process.env, BASE_URL: server().baseUrl, TOKEN: server().tokens.alice };
        const run = async (...flags: string[]) =>
          JSON.parse((await execFileP(process.execPath, [...flags, "use.mjs"], { cwd: dir, env })).stdout) as {
            transportKind: string;
            seatCount: number;
            typed: string;
          };
        assert.deepEqual(await run(), { transportKind: "connect-node", seatCount: 40, typed: "function" });
        assert.deepEqual(await run("--conditions=browser"), {
          transportKind: "connect-web",
          seatCount: 40,
          typed: "function",
        });
      } finally {
        await rm(path.dirname(dir), { recursive: true, force: true });
      }
    });
  });
}

/**
 * Installs the package's tarball in a fresh project with a script that uses
 * it, and type-checks a TypeScript file of that project against the
 * installed types. Resolves with the project's directory and the tarball's
 * file list.
 */
async function packedApp(): Promise<{ dir: string; files: string[] }> {
  const root = await mkdtemp(path.join(tmpdir(), "seatghor-client-pack-"));
  try {
    return await packInto(root);
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The tarball: make sdk's release when SEATGHOR_SDK_DIST names it (make
 * test-ts does), checked against its SHA256SUMS; else one npm pack writes
 * into root now (npm test built dist/ already, so --ignore-scripts skips
 * prepack's build).
 */
async function tarballIn(root: string): Promise<string> {
  const dist = process.env.SEATGHOR_SDK_DIST;
  if (dist) {
    const { version } = JSON.parse(await readFile(path.join(packageRoot, "package.json"), "utf8")) as { version: string };
    const name = `seatghor-client-${version}.tgz`;
    const sums = await readFile(path.join(dist, "SHA256SUMS"), "utf8");
    const listed = sums.split("\n").find((l) => l.endsWith(`  ${name}`));
    assert.ok(listed, `SHA256SUMS of ${dist} lists ${name}`);
    const digest = createHash("sha256")
      .update(await readFile(path.join(dist, name)))
      .digest("hex");
    assert.equal(digest, listed.slice(0, 64), `${name} is the one SHA256SUMS lists`);
    return path.join(dist, name);
  }
  await execFileP("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", root], { cwd: packageRoot });
  const tarball = (await readdir(root)).find((f) => f.endsWith(".tgz"));
  assert.ok(tarball, "npm pack wrote a tarball");
  return path.join(root, tarball);
}

async function packInto(root: string): Promise<{ dir: string; files: string[] }> {
  const tarball = await tarballIn(root);
  const { stdout: listing } = await execFileP("tar", ["-tzf", tarball]);
  const dir = path.join(root, "app");
  await mkdir(dir);
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }));
  // The dependencies come from npm's cache (npm ci filled it).
  await execFileP("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", tarball], {
    cwd: dir,
  });
  await writeFile(
    path.join(dir, "use.mjs"),
    `import { createSeatghorClient, transportKind, SeatsUnavailableError } from "@seatghor/client";
const sg = createSeatghorClient({ baseUrl: process.env.BASE_URL, token: process.env.TOKEN });
const map = await sg.seatMap.getSeatMap({ showId: 7n });
console.log(JSON.stringify({ transportKind, seatCount: map.seatCount, typed: typeof SeatsUnavailableError }));
`,
  );
  // A TypeScript consumer: the types resolve through "exports".
  await writeFile(
    path.join(dir, "use.ts"),
    `import { createSeatghorClient, SeatsUnavailableError } from "@seatghor/client";
const sg = createSeatghorClient({ baseUrl: "http://127.0.0.1:8080" });
export async function seats(): Promise<number> {
  try {
    return (await sg.seatMap.getSeatMap({ showId: 7n })).seatCount;
  } catch (err) {
    if (err instanceof SeatsUnavailableError) return err.seats.length;
    throw err;
  }
}
`,
  );
  await writeFile(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        lib: ["es2022", "dom"],
        types: [],
        skipLibCheck: true,
      },
      files: ["use.ts"],
    }),
  );
  const tsc = path.join(packageRoot, "node_modules", "typescript", "bin", "tsc");
  await execFileP(process.execPath, [tsc, "-p", "."], { cwd: dir }).catch((e: { stdout?: string }) =>
    assert.fail(`tsc in the fresh project: ${e.stdout ?? String(e)}`),
  );
  return { dir, files: listing.split("\n").filter((f) => f !== "") };
}
