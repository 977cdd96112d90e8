// A partner's program selling Seatghor tickets with the TypeScript SDK, in
// Node: it subscribes a webhook receiver to booking.confirmed, reads its
// allocations of the show and sells from them first, holds seats (choosing
// again when someone was quicker), orders and pays them, waits for the
// order's confirmation to arrive by webhook with its Standard Webhooks
// signature verified, and deletes the endpoint it made.
//
//   node dist/examples/reseller.js --base-url http://127.0.0.1:8080 \
//     --api-key "$SEATGHOR_API_KEY" --webhooks-key "$SEATGHOR_WEBHOOKS_KEY" --seats 2
//
// It sells with a booking key and manages the endpoint with a key of scope
// webhooks: a booking key may not change webhook endpoints (decision 0276).
// The receiver listens on --listen; Seatghor must reach it at --webhook-url
// (https, or http to 127.0.0.1 on a dev server). A real integration
// subscribes once and keeps the secret; this program subscribes and
// deletes on every run so that it is self-contained.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

import { fromJson } from "@bufbuild/protobuf";
import type { JsonValue } from "@bufbuild/protobuf";
import { Webhook } from "standardwebhooks";

import {
  AllocationStatus,
  BookingConfirmedSchema,
  PaymentState,
  SeatsUnavailableError,
  ShowKind,
  createSeatghorClient,
} from "@seatghor/client";
import type { BookingConfirmed, SeatghorClient } from "@seatghor/client";

/** What the program is told (its flags). */
export interface ResellerOptions {
  /** The Seatghor API. */
  baseUrl: string;
  /** The partner's booking API key (sk_live_… or sk_test_…). */
  apiKey: string;
  /** The partner's API key of scope webhooks, to manage the endpoint. */
  webhooksKey: string;
  /** The show to sell; left out, the first bus trip listed. */
  showId?: bigint;
  /** How many seats to sell. */
  seats: number;
  /** The sandbox gateway's test token. */
  sandboxToken: string;
  /** Where the receiver listens: host and port (0: any free one). */
  listenHost: string;
  listenPort: number;
  /** The receiver's URL as Seatghor reaches it; left out, http://<listen address>/seatghor. */
  webhookUrl?: string;
  /** How long to wait for the confirmation, in milliseconds. */
  waitMs: number;
  /** Where the program says what it did, a line at a time. */
  log: (line: string) => void;
}

/** What one run sold. */
export interface Sale {
  showId: bigint;
  endpointId: bigint;
  /** The seats sold, and whether they came from the partner's allocation. */
  seats: string[];
  fromAllocation: boolean;
  orderId: string;
  /** The booking.confirmed event as the receiver verified it. */
  confirmed: BookingConfirmed;
}

/** Subscribes, sells, waits for the signed confirmation, unsubscribes. */
export async function sell(o: ResellerOptions): Promise<Sale> {
  const sg = createSeatghorClient({ baseUrl: o.baseUrl, token: o.apiKey });
  const hooks = createSeatghorClient({ baseUrl: o.baseUrl, token: o.webhooksKey });

  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.listenPort, o.listenHost, resolve);
  });
  try {
    const { address, port } = server.address() as AddressInfo;
    const url = o.webhookUrl ?? `http://${address}:${port}/seatghor`;
    // The secret is shown only in this answer.
    const { endpoint, secret } = await hooks.webhooks.createEndpoint({
      url,
      eventTypes: ["booking.confirmed"],
      description: "reseller example",
    });
    const endpointId = endpoint!.endpointId;
    o.log(`subscribed endpoint ${endpointId} at ${url}`);
    const receiver = new Receiver(secret);
    server.on("request", receiver.handle);
    try {
      const showId = o.showId ?? (await firstBusTrip(sg));
      const { seats, fromAllocation, orderId } = await buy(sg, showId, o);
      const confirmed = await receiver.confirmation(orderId, o.waitMs);
      o.log(
        `confirmed by webhook: order ${orderId}, seats ${confirmed.seats.join(" ")}, ` +
          `total ${confirmed.total?.amountMinor} ${confirmed.total?.currency}`,
      );
      return { showId, endpointId, seats, fromAllocation, orderId, confirmed };
    } finally {
      await hooks.webhooks.deleteEndpoint({ endpointId });
      o.log(`deleted endpoint ${endpointId}`);
    }
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

async function firstBusTrip(sg: SeatghorClient): Promise<bigint> {
  const { shows } = await sg.catalog.listShows({ kind: ShowKind.BUS_TRIP, pageSize: 1 });
  if (shows.length === 0) throw new Error("no bus trip is listed");
  return shows[0].showId;
}

/**
 * Holds o.seats seats of the show, orders and pays them. It asks for the
 * seats of its own active allocations first (ring-fenced for it), else for
 * any of the show; when some were taken meanwhile, it leaves those out and
 * asks for others: the SeatsUnavailableError names them.
 */
async function buy(sg: SeatghorClient, showId: bigint, o: ResellerOptions) {
  const { allocations } = await sg.allocations.listAllocations({ showId });
  const mine = allocations.filter((a) => a.status === AllocationStatus.ACTIVE && a.available >= o.seats);
  for (const a of mine) o.log(`allocation ${a.allocationId} of show ${showId}: ${a.available} of ${a.quantity} seats free`);
  let free = mine.flatMap((a) => a.seats);
  const fromAllocation = free.length > 0;
  if (!fromAllocation) {
    const layout = await sg.seatMap.getSeatLayout({ showId });
    free = layout.sections.flatMap((s) => s.rows.flatMap((r) => r.seats));
  }
  for (;;) {
    if (free.length < o.seats) throw new Error(`show ${showId} has fewer than ${o.seats} seats left`);
    try {
      const { hold } = await sg.holds.createHold({ showId, seats: free.slice(0, o.seats) });
      o.log(`held ${hold!.seats.join(" ")} of show ${showId}: ${hold!.holdId}`);
      const { order } = await sg.orders.createOrder({ holdId: hold!.holdId });
      const { payment } = await sg.payments.startPayment({
        orderId: order!.orderId,
        sandbox: { token: o.sandboxToken },
      });
      o.log(`order ${order!.orderId}: payment ${payment!.paymentId} ${PaymentState[payment!.status]}`);
      return { seats: hold!.seats, fromAllocation, orderId: order!.orderId };
    } catch (err) {
      if (!(err instanceof SeatsUnavailableError)) throw err;
      o.log(`taken meanwhile: ${err.seats.join(" ")}; choosing again`);
      free = free.filter((s) => !err.seats.includes(s));
    }
  }
}

/**
 * The webhook endpoint: it refuses what does not verify (signature and
 * timestamp, by the Standard Webhooks library) and records each
 * booking.confirmed once: deliveries are at least once, and the webhook-id
 * repeats.
 */
export class Receiver {
  readonly #wh: Webhook;
  readonly #seen = new Set<string>();
  readonly #confirmed = new Map<string, BookingConfirmed>();
  readonly #waiting = new Set<() => void>();

  /** A receiver of the endpoint whose secret (whsec_…) is given. */
  constructor(secret: string) {
    this.#wh = new Webhook(secret);
  }

  /** The request listener of node:http. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > 1 << 20) req.destroy();
      else chunks.push(c);
    });
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers[name] = value;
      }
      let event: { type?: string; data?: unknown };
      try {
        event = this.#wh.verify(body, headers) as typeof event;
      } catch {
        res.writeHead(401).end("bad signature");
        return;
      }
      const id = headers["webhook-id"];
      if (!this.#seen.has(id)) {
        this.#seen.add(id);
        if (event.type === "booking.confirmed") {
          // data is the event in proto field names; newer fields are skipped.
          const c = fromJson(BookingConfirmedSchema, event.data as JsonValue, { ignoreUnknownFields: true });
          this.#confirmed.set(c.orderId, c);
          for (const wake of this.#waiting) wake();
        }
      }
      res.writeHead(204).end();
    });
  };

  /** The order's confirmation once it has arrived, within timeoutMs. */
  confirmation(orderId: string, timeoutMs: number): Promise<BookingConfirmed> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const c = this.#confirmed.get(orderId);
        if (c === undefined) return;
        done();
        resolve(c);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no booking.confirmed for order ${orderId} within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.#waiting.delete(check);
      };
      this.#waiting.add(check);
      check();
    });
  }
}

/** Runs the program with its command line. */
export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      "base-url": { type: "string", default: process.env.SEATGHOR_URL ?? "http://127.0.0.1:8080" },
      "api-key": { type: "string", default: process.env.SEATGHOR_API_KEY ?? "" },
      "webhooks-key": { type: "string", default: process.env.SEATGHOR_WEBHOOKS_KEY ?? "" },
      show: { type: "string", default: "0" },
      seats: { type: "string", default: "2" },
      "sandbox-token": { type: "string", default: "tok_success" },
      listen: { type: "string", default: "127.0.0.1:0" },
      "webhook-url": { type: "string" },
      // Seconds.
      wait: { type: "string", default: "60" },
    },
  });
  const [host, port] = splitHostPort(values.listen);
  const show = BigInt(values.show);
  await sell({
    baseUrl: values["base-url"],
    apiKey: values["api-key"],
    webhooksKey: values["webhooks-key"],
    showId: show === 0n ? undefined : show,
    seats: Number(values.seats),
    sandboxToken: values["sandbox-token"],
    listenHost: host,
    listenPort: port,
    webhookUrl: values["webhook-url"],
    waitMs: Number(values.wait) * 1000,
    log: (line) => console.log(line),
  });
}

function splitHostPort(hostPort: string): [string, number] {
  const i = hostPort.lastIndexOf(":");
  if (i < 0) throw new Error(`--listen ${hostPort}: want host:port`);
  return [hostPort.slice(0, i), Number(hostPort.slice(i + 1))];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error("reseller:", err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
