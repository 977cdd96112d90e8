// Entry point of @seatghor/client: the SDK helpers and the generated
// services and messages of the catalog, booking, seat-map, payment and
// ledger APIs.
export {
  createSeatghorClient,
  bearerAuth,
  newIdempotencyKey,
  idempotent,
  seatsUnavailable,
  seatStates,
  IDEMPOTENCY_KEY_HEADER,
} from "./client.js";
export type { SeatghorClient, SeatghorClientOptions } from "./client.js";

// Re-exported so callers need not depend on @connectrpc/connect directly
// to inspect errors.
export { Code, ConnectError } from "@connectrpc/connect";

export * from "./gen/seatghor/common/v1/money_pb.js";
export * from "./gen/seatghor/booking/v1/hold_pb.js";
export * from "./gen/seatghor/booking/v1/order_pb.js";
export * from "./gen/seatghor/payment/v1/payment_pb.js";
export * from "./gen/seatghor/ledger/v1/ledger_pb.js";
// catalog and seatmap both define Section and GaArea; keep the catalog ones
// under their plain names and the seat-map ones under a namespace.
export * from "./gen/seatghor/catalog/v1/catalog_pb.js";
export * as seatmap from "./gen/seatghor/seatmap/v1/seatmap_pb.js";
export {
  SeatMapService,
  SeatState,
  SeatStateSchema,
  GetSeatMapRequestSchema,
  GetSeatMapResponseSchema,
  RowSchema,
} from "./gen/seatghor/seatmap/v1/seatmap_pb.js";
export type { GetSeatMapRequest, GetSeatMapResponse, Row } from "./gen/seatghor/seatmap/v1/seatmap_pb.js";
