// What both entry points export: the client's types and helpers, the typed
// errors, and the generated services and messages of every API.
export { clientInterceptors, clientOverTransport, seatsUnavailable, seatStates, ticketNumber } from "./client.js";
export type { BuyerClient, SeatghorClient, SeatghorClientOptions } from "./client.js";
export {
  IDEMPOTENCY_KEY_HEADER,
  QUEUE_TOKEN_HEADER,
  bearerAuth,
  fetchWithUnavailable,
  idempotencyKeys,
  idempotent,
  isRetryable,
  needsIdempotencyKey,
  newIdempotencyKey,
  retries,
  typedErrors,
  withQueueToken,
} from "./calls.js";
export type { RetryEvent, RetryOptions } from "./calls.js";
export * from "./errors.js";

// Re-exported so callers need not depend on @connectrpc/connect directly
// to inspect errors.
export { Code, ConnectError } from "@connectrpc/connect";
export type { CallOptions, Interceptor } from "@connectrpc/connect";

// Every message, enum and service of the APIs is exported here: the
// package's "exports" open no deeper path (decision 0327).
export * from "./gen/seatghor/common/v1/money_pb.js";
export * from "./gen/seatghor/common/v1/local_time_pb.js";
export * from "./gen/seatghor/common/v1/journey_pb.js";
// partner.v1 has a Contact too (a partner's): the buyer's checkout contact
// is CheckoutContact.
export { ContactSchema as CheckoutContactSchema } from "./gen/seatghor/common/v1/contact_pb.js";
export type { Contact as CheckoutContact } from "./gen/seatghor/common/v1/contact_pb.js";
export * from "./gen/seatghor/booking/v1/hold_pb.js";
export * from "./gen/seatghor/booking/v1/order_pb.js";
export * from "./gen/seatghor/payment/v1/payment_pb.js";
export * from "./gen/seatghor/ledger/v1/ledger_pb.js";
export * from "./gen/seatghor/waitingroom/v1/waitingroom_pb.js";
export * from "./gen/seatghor/search/v1/search_pb.js";
export * from "./gen/seatghor/tickets/v1/tickets_pb.js";
export * from "./gen/seatghor/tickets/v1/manifest_pb.js";
export * from "./gen/seatghor/counter/v1/counter_pb.js";
export * from "./gen/seatghor/partner/v1/partner_pb.js";
export * from "./gen/seatghor/partner/v1/allocation_pb.js";
export * from "./gen/seatghor/partner/v1/webhook_pb.js";
export * from "./gen/seatghor/network/v1/network_pb.js";
export * from "./gen/seatghor/notify/v1/notify_pb.js";
export * from "./gen/seatghor/signin/v1/phone_pb.js";
// The events: a webhook delivery's data is one of them in proto field
// names (read it with fromJson of @bufbuild/protobuf and its schema).
export * from "./gen/seatghor/events/v1/events_pb.js";
// catalog and seatmap both define Section and GaArea; keep the catalog ones
// under their plain names and the seat-map ones under a namespace.
export * from "./gen/seatghor/catalog/v1/catalog_pb.js";
export * from "./gen/seatghor/catalog/v1/layout_pb.js";
export * as seatmap from "./gen/seatghor/seatmap/v1/seatmap_pb.js";
// The reasons' one declaration (the Reason enum, each value's code and
// action as its spec option), from which ERROR_REASONS and the reason lists
// above are generated: under a namespace, since its names (Reason, spec)
// are generic.
export * as reasonspec from "./gen/seatghor/errors/v1/reason_pb.js";
export {
  SeatMapService,
  SeatState,
  SeatStateSchema,
  GetSeatMapRequestSchema,
  GetSeatMapResponseSchema,
  GetSeatLayoutRequestSchema,
  GetSeatLayoutResponseSchema,
  RowSchema,
} from "./gen/seatghor/seatmap/v1/seatmap_pb.js";
export type {
  GetSeatMapRequest,
  GetSeatMapResponse,
  GetSeatLayoutRequest,
  GetSeatLayoutResponse,
  Row,
} from "./gen/seatghor/seatmap/v1/seatmap_pb.js";
