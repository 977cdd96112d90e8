// The Seatghor client, whatever the transport: the Connect clients of every
// service over one transport that carries the calls' interceptors (auth,
// idempotency keys, retries, typed errors). The entry points pick the
// transport: ./node.ts (connect-node) and ./browser.ts (connect-web, fetch).
//
//   const sg = createSeatghorClient({ baseUrl: "http://127.0.0.1:8080", token });
//   const { hold } = await sg.holds.createHold({ showId: 7n, seats: ["A1", "A2"] });
//   // an Idempotency-Key was added, and reused if the call was retried
import { ConnectError, createClient } from "@connectrpc/connect";
import type { Client, Interceptor, Transport } from "@connectrpc/connect";

import { bearerAuth, idempotencyKeys, retries, typedErrors } from "./calls.js";
import type { RetryOptions } from "./calls.js";
import { CatalogService } from "./gen/seatghor/catalog/v1/catalog_pb.js";
import { HoldService, SeatsUnavailableSchema } from "./gen/seatghor/booking/v1/hold_pb.js";
import type { SeatsUnavailable } from "./gen/seatghor/booking/v1/hold_pb.js";
import { OrderService } from "./gen/seatghor/booking/v1/order_pb.js";
import { LedgerService } from "./gen/seatghor/ledger/v1/ledger_pb.js";
import { NetworkService } from "./gen/seatghor/network/v1/network_pb.js";
import { PartnerService } from "./gen/seatghor/partner/v1/partner_pb.js";
import { AllocationService } from "./gen/seatghor/partner/v1/allocation_pb.js";
import { WebhookService } from "./gen/seatghor/partner/v1/webhook_pb.js";
import { PaymentService } from "./gen/seatghor/payment/v1/payment_pb.js";
import { TripSearchService } from "./gen/seatghor/search/v1/search_pb.js";
import { SeatMapService, SeatState } from "./gen/seatghor/seatmap/v1/seatmap_pb.js";
import type { GetSeatMapResponse } from "./gen/seatghor/seatmap/v1/seatmap_pb.js";
import { TicketService } from "./gen/seatghor/tickets/v1/tickets_pb.js";
import { ManifestService } from "./gen/seatghor/tickets/v1/manifest_pb.js";
import { CounterService } from "./gen/seatghor/counter/v1/counter_pb.js";
import { NotificationService } from "./gen/seatghor/notify/v1/notify_pb.js";
import { PhoneSignInService } from "./gen/seatghor/signin/v1/phone_pb.js";
import { WaitingRoomService } from "./gen/seatghor/waitingroom/v1/waitingroom_pb.js";

/** Options of createSeatghorClient (both entry points). */
export interface SeatghorClientOptions {
  /** Where the server listens, e.g. "http://127.0.0.1:8080". */
  baseUrl: string;
  /**
   * API token, sent as "Authorization: Bearer <token>"; a function is asked
   * before every attempt (for tokens that refresh). Leave it out for the
   * calls that need no caller.
   */
  token?: string | (() => string | undefined | Promise<string | undefined>);
  /** Use the binary Protobuf encoding instead of JSON (default false). */
  binary?: boolean;
  /** How calls are retried (decision 0140); false: never. */
  retry?: RetryOptions | false;
  /**
   * More interceptors. They run on every attempt, inside the retries and
   * after the Idempotency-Key is set, before the Authorization header.
   */
  interceptors?: Interceptor[];
}

/** Connect clients for the Seatghor services. */
export interface SeatghorClient {
  /** Shows and organisations; CreateShow is for operators. */
  catalog: Client<typeof CatalogService>;
  /** Seat holds: CreateHold needs a Queue-Token while the show's waiting room is active. */
  holds: Client<typeof HoldService>;
  /** Orders from holds, the caller's orders, cancellation. */
  orders: Client<typeof OrderService>;
  /** The seat map (2-bit availability, see {@link seatStates}) and layout. */
  seatMap: Client<typeof SeatMapService>;
  /**
   * Payments of the caller's orders. A retried StartPayment never charges
   * twice: the key also derives the gateway's. The outcome may
   * arrive later: poll GetPayment (or GetOrder).
   */
  payments: Client<typeof PaymentService>;
  /** The double-entry ledger. Admins only. */
  ledger: Client<typeof LedgerService>;
  /** The on-sale waiting room: Join, GetStatus; GetSale and UpdateSale for operators. */
  waitingRoom: Client<typeof WaitingRoomService>;
  /** Trip search (typo tolerant, R-8). */
  search: Client<typeof TripSearchService>;
  /** The caller's tickets, their QR and PDF, and the gate's check-in. */
  tickets: Client<typeof TicketService>;
  /**
   * Partner resellers: partners (admins), their API keys (pass a key as
   * `token`), statements.
   */
  partners: Client<typeof PartnerService>;
  /** Partners' ring-fenced allocations: operators allocate, partners list their own. */
  allocations: Client<typeof AllocationService>;
  /**
   * Partners' webhook endpoints and their deliveries. Changing an endpoint
   * needs the partner's token or an API key of scope webhooks; a booking
   * key only lists (decision 0276). Deliveries are signed per Standard
   * Webhooks: verify them with its library (examples/reseller.ts).
   */
  webhooks: Client<typeof WebhookService>;
  /**
   * A bus operator's network: routes with their stops and counters, and
   * the timetables that make the trips. Operators (their organisations'
   * managers) and admins.
   */
  network: Client<typeof NetworkService>;
  /**
   * A trip's manifest for its supervisor: passengers by seat, no-shows,
   * the CSV export. The show's gate staff, managers and admins.
   */
  manifest: Client<typeof ManifestService>;
  /**
   * An operator's ticket counter: cash shifts, sales, refunds and payouts
   * in cash, the shift's report. The organisation's counter staff and
   * managers.
   */
  counter: Client<typeof CounterService>;
  /** What the SMS sandbox recorded (dev and tests). Admins only. */
  notifications: Client<typeof NotificationService>;
  /** Sign-in by mobile number and an SMS code: anyone (no token). */
  phoneSignIn: Client<typeof PhoneSignInService>;
}

/**
 * The interceptors of a client, outermost first (see calls.ts). Transport
 * factories put them on their transport.
 */
export function clientInterceptors(options: SeatghorClientOptions): Interceptor[] {
  const chain: Interceptor[] = [typedErrors, idempotencyKeys];
  if (options.retry !== false) chain.push(retries(options.retry));
  chain.push(...(options.interceptors ?? []));
  if (options.token !== undefined) chain.push(bearerAuth(options.token));
  return chain;
}

/**
 * The services a buyer's app calls: shows, holds, orders, the seat map,
 * payments, the waiting room, trip search and tickets (a gate's staff use
 * tickets too). A web page that needs no more builds these alone
 * (buyerClientOverTransport), so its bundle carries none of the other
 * services' descriptors.
 */
export type BuyerClient = Pick<SeatghorClient,
  "catalog" | "holds" | "orders" | "seatMap" | "payments" | "waitingRoom" | "search" | "tickets">;

/** The Connect clients of a buyer's services over one transport. */
export function buyerClientOverTransport(transport: Transport): BuyerClient {
  return {
    catalog: createClient(CatalogService, transport),
    holds: createClient(HoldService, transport),
    orders: createClient(OrderService, transport),
    seatMap: createClient(SeatMapService, transport),
    payments: createClient(PaymentService, transport),
    waitingRoom: createClient(WaitingRoomService, transport),
    search: createClient(TripSearchService, transport),
    tickets: createClient(TicketService, transport),
  };
}

/** The Connect clients of every service over one transport. */
export function clientOverTransport(transport: Transport): SeatghorClient {
  return {
    ...buyerClientOverTransport(transport),
    ledger: createClient(LedgerService, transport),
    partners: createClient(PartnerService, transport),
    allocations: createClient(AllocationService, transport),
    webhooks: createClient(WebhookService, transport),
    manifest: createClient(ManifestService, transport),
    counter: createClient(CounterService, transport),
    notifications: createClient(NotificationService, transport),
    phoneSignIn: createClient(PhoneSignInService, transport),
    network: createClient(NetworkService, transport),
  };
}

/**
 * The SeatsUnavailable detail of a refused CreateHold (code ABORTED), or
 * undefined when err is not a ConnectError or carries no such detail. The
 * client's SeatsUnavailableError has the same fields.
 */
export function seatsUnavailable(err: unknown): SeatsUnavailable | undefined {
  if (!(err instanceof ConnectError)) {
    return undefined;
  }
  return err.findDetails(SeatsUnavailableSchema)[0];
}

/**
 * The ticket number of an order (decision 0471), what its SMS and receipts
 * print and what finds it with the phone (TicketService.FindTickets): the
 * first ten characters of the random part of its id, upper case
 * ("ord_1000_mwty306ptd9gg5y7" → "MWTY306PTD"); "" for what is not an
 * order id.
 */
export function ticketNumber(orderId: string): string {
  const m = /^ord_[1-9]\d*_([0-9a-hjkmnp-tv-z]{16})$/.exec(orderId);
  return m ? m[1]!.slice(0, 10).toUpperCase() : "";
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
