// A tiny typed SDK for the Seatghor Connect APIs.
//
//   const sg = createSeatghorClient({ baseUrl: "http://127.0.0.1:8080", token });
//   const { hold } = await sg.holds.createHold(
//     { showId: 7n, seats: ["A1", "A2"] },
//     idempotent(), // every write RPC needs an Idempotency-Key header
//   );
import { randomUUID } from "node:crypto";

import { ConnectError, createClient } from "@connectrpc/connect";
import type { CallOptions, Client, Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";

import { CatalogService } from "./gen/seatghor/catalog/v1/catalog_pb.js";
import { HoldService, SeatsUnavailableSchema } from "./gen/seatghor/booking/v1/hold_pb.js";
import type { SeatsUnavailable } from "./gen/seatghor/booking/v1/hold_pb.js";
import { OrderService } from "./gen/seatghor/booking/v1/order_pb.js";
import { LedgerService } from "./gen/seatghor/ledger/v1/ledger_pb.js";
import { PaymentService } from "./gen/seatghor/payment/v1/payment_pb.js";
import { SeatMapService, SeatState } from "./gen/seatghor/seatmap/v1/seatmap_pb.js";
import type { GetSeatMapResponse } from "./gen/seatghor/seatmap/v1/seatmap_pb.js";

/** Options of {@link createSeatghorClient}. */
export interface SeatghorClientOptions {
  /** Where the server listens, e.g. "http://127.0.0.1:8080". */
  baseUrl: string;
  /** API token; sent as "Authorization: Bearer <token>" on every call. */
  token: string;
  /** Use the binary Protobuf encoding instead of JSON (default false). */
  binary?: boolean;
}

/** Connect clients for the Seatghor services. */
export interface SeatghorClient {
  catalog: Client<typeof CatalogService>;
  holds: Client<typeof HoldService>;
  orders: Client<typeof OrderService>;
  seatMap: Client<typeof SeatMapService>;
  /**
   * Payments of the caller's orders. StartPayment needs an Idempotency-Key
   * (see {@link idempotent}); the key also derives the gateway's idempotency
   * key, so retrying with the same key is safe and never charges twice
   * . The outcome may arrive later: poll GetPayment (or GetOrder).
   * GetPayment is owner-only: another user's payment is NOT_FOUND.
   */
  payments: Client<typeof PaymentService>;
  /**
   * The double-entry ledger: trial balance, journal and reconciliation.
   * Admin-only; other callers get PERMISSION_DENIED. RunReconciliation needs
   * an Idempotency-Key.
   */
  ledger: Client<typeof LedgerService>;
}

/**
 * The header every write RPC needs (CreateHold, CreateShow, CreateOrder,
 * StartPayment, RunReconciliation, …).
 */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

/** An interceptor that adds "Authorization: Bearer <token>" to every request. */
export function bearerAuth(token: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("Authorization", `Bearer ${token}`);
    return next(req);
  };
}

/** Creates the Connect clients for one server and one token. */
export function createSeatghorClient(options: SeatghorClientOptions): SeatghorClient {
  const transport = createConnectTransport({
    baseUrl: options.baseUrl,
    httpVersion: "1.1",
    useBinaryFormat: options.binary ?? false,
    interceptors: [bearerAuth(options.token)],
  });
  return {
    catalog: createClient(CatalogService, transport),
    holds: createClient(HoldService, transport),
    orders: createClient(OrderService, transport),
    seatMap: createClient(SeatMapService, transport),
    payments: createClient(PaymentService, transport),
    ledger: createClient(LedgerService, transport),
  };
}

/** A fresh idempotency key: one per logical write, reused on retries. */
export function newIdempotencyKey(): string {
  return randomUUID();
}

/**
 * Call options carrying an Idempotency-Key header. Pass the same key again to
 * retry the same logical request safely.
 */
export function idempotent(key: string = newIdempotencyKey(), options: CallOptions = {}): CallOptions {
  const headers = new Headers(options.headers);
  headers.set(IDEMPOTENCY_KEY_HEADER, key);
  return { ...options, headers };
}

/**
 * The SeatsUnavailable detail of a refused CreateHold (code ABORTED), or
 * undefined when err is not a ConnectError or carries no such detail.
 */
export function seatsUnavailable(err: unknown): SeatsUnavailable | undefined {
  if (!(err instanceof ConnectError)) {
    return undefined;
  }
  return err.findDetails(SeatsUnavailableSchema)[0];
}

/**
 * Decodes the availability of a seat map: seat id → SeatState, in layout
 * order (2 bits per seat, four seats a byte, first seat in the lowest bits).
 */
export function seatStates(map: GetSeatMapResponse): Map<string, SeatState> {
  const states = new Map<string, SeatState>();
  let i = 0;
  for (const section of map.sections) {
    for (const row of section.rows) {
      for (const seat of row.seats) {
        const byte = map.availability[i >> 2] ?? 0;
        states.set(seat, ((byte >> ((i & 3) * 2)) & 3) as SeatState);
        i++;
      }
    }
  }
  return states;
}
