// Typed errors: every error the API answers carries a google.rpc.ErrorInfo
// whose domain is seatghor.com and whose reason is one word of the table in
// docs/errors.md (decision 0095). The SDK turns such a ConnectError into a
// SeatghorError (a ConnectError still) of the class its reason names, with
// the BadRequest field violations, the SeatsUnavailable detail and the
// server's retry delay already decoded.
import { create, createFileRegistry } from "@bufbuild/protobuf";
import type { DescMessage, Message } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  file_google_protobuf_duration,
} from "@bufbuild/protobuf/wkt";
import type { Duration } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

import { SeatsUnavailableSchema } from "./gen/seatghor/booking/v1/hold_pb.js";
import { INVALID_ARGUMENT_REASONS, OTHER_REASONS, QUEUE_TOKEN_REASONS, UNAUTHENTICATED_REASONS } from "./reasons.gen.js";

/** The google.rpc.ErrorInfo domain of every reason the API sends. */
export const ERROR_DOMAIN = "seatghor.com";

// Every reason of docs/errors.md, grouped by the class that carries it:
// generated with the table from the API's one list of reasons (make generate),
// so a reason added there is here at the next build.
export { INVALID_ARGUMENT_REASONS, OTHER_REASONS, QUEUE_TOKEN_REASONS, UNAUTHENTICATED_REASONS };

export type InvalidArgumentReason = (typeof INVALID_ARGUMENT_REASONS)[number];
export type QueueTokenReason = (typeof QUEUE_TOKEN_REASONS)[number];
export type UnauthenticatedReason = (typeof UNAUTHENTICATED_REASONS)[number];

/** Every reason the API documents (docs/errors.md). */
export type ErrorReason =
  | InvalidArgumentReason
  | QueueTokenReason
  | UnauthenticatedReason
  | "SEATS_UNAVAILABLE"
  | "IDEMPOTENCY_KEY_IN_PROGRESS"
  | "RATE_LIMITED"
  | (typeof OTHER_REASONS)[number];

/** Every documented reason, once. */
export const ERROR_REASONS: readonly ErrorReason[] = [
  ...INVALID_ARGUMENT_REASONS,
  ...QUEUE_TOKEN_REASONS,
  ...UNAUTHENTICATED_REASONS,
  "SEATS_UNAVAILABLE",
  "IDEMPOTENCY_KEY_IN_PROGRESS",
  "RATE_LIMITED",
  ...OTHER_REASONS,
];

// The google.rpc error details the API sends (google/rpc/error_details.proto,
// the fields Seatghor fills), described here because protobuf-es has no
// google.rpc package and the generated code holds only our own protos.
const F = FieldDescriptorProto_Type;
const L = FieldDescriptorProto_Label;
const str = (name: string, number: number, jsonName: string) => ({
  name,
  number,
  jsonName,
  type: F.STRING,
  label: L.OPTIONAL,
});
const errorDetailsFile = create(FileDescriptorProtoSchema, {
  name: "google/rpc/error_details.proto",
  package: "google.rpc",
  dependency: ["google/protobuf/duration.proto"],
  syntax: "proto3",
  messageType: [
    {
      name: "ErrorInfo",
      field: [
        str("reason", 1, "reason"),
        str("domain", 2, "domain"),
        {
          name: "metadata",
          number: 3,
          jsonName: "metadata",
          type: F.MESSAGE,
          label: L.REPEATED,
          typeName: ".google.rpc.ErrorInfo.MetadataEntry",
        },
      ],
      nestedType: [
        { name: "MetadataEntry", field: [str("key", 1, "key"), str("value", 2, "value")], options: { mapEntry: true } },
      ],
    },
    {
      name: "RetryInfo",
      field: [
        {
          name: "retry_delay",
          number: 1,
          jsonName: "retryDelay",
          type: F.MESSAGE,
          label: L.OPTIONAL,
          typeName: ".google.protobuf.Duration",
        },
      ],
    },
    {
      name: "QuotaFailure",
      field: [
        {
          name: "violations",
          number: 1,
          jsonName: "violations",
          type: F.MESSAGE,
          label: L.REPEATED,
          typeName: ".google.rpc.QuotaFailure.Violation",
        },
      ],
      nestedType: [{ name: "Violation", field: [str("subject", 1, "subject"), str("description", 2, "description")] }],
    },
    {
      name: "BadRequest",
      field: [
        {
          name: "field_violations",
          number: 1,
          jsonName: "fieldViolations",
          type: F.MESSAGE,
          label: L.REPEATED,
          typeName: ".google.rpc.BadRequest.FieldViolation",
        },
      ],
      nestedType: [
        {
          name: "FieldViolation",
          field: [str("field", 1, "field"), str("description", 2, "description"), str("reason", 3, "reason")],
        },
      ],
    },
  ],
});
const errorDetails = createFileRegistry(errorDetailsFile, (name) =>
  name === "google/protobuf/duration.proto" ? file_google_protobuf_duration : undefined,
);

function detailSchema<T extends Message>(typeName: string): GenMessage<T> {
  const desc: DescMessage | undefined = errorDetails.getMessage(typeName);
  if (desc === undefined) throw new Error(`@seatghor/client: no descriptor for ${typeName}`);
  return desc as GenMessage<T>;
}

/** google.rpc.ErrorInfo: the reason of an error. */
export type ErrorInfo = Message<"google.rpc.ErrorInfo"> & {
  reason: string;
  domain: string;
  metadata: { [key: string]: string };
};
/** google.rpc.RetryInfo: when to try again. */
export type RetryInfo = Message<"google.rpc.RetryInfo"> & { retryDelay?: Duration };
/** One field at fault in a google.rpc.BadRequest. */
export interface FieldViolation {
  /** The request's field path (`seats[0]`, `amount.amount_minor`) or a header (`Idempotency-Key`). */
  field: string;
  /** What is wrong, for people. */
  description: string;
  /** The rule broken, e.g. `string.pattern` (protovalidate), or "". */
  reason: string;
}
/** google.rpc.BadRequest: the fields at fault. */
export type BadRequest = Message<"google.rpc.BadRequest"> & {
  fieldViolations: (Message<"google.rpc.BadRequest.FieldViolation"> & FieldViolation)[];
};
/** One quota a RATE_LIMITED call ran into. */
export interface QuotaViolation {
  subject: string;
  description: string;
}
/** google.rpc.QuotaFailure: which limit was hit. */
export type QuotaFailure = Message<"google.rpc.QuotaFailure"> & {
  violations: (Message<"google.rpc.QuotaFailure.Violation"> & QuotaViolation)[];
};

export const ErrorInfoSchema = detailSchema<ErrorInfo>("google.rpc.ErrorInfo");
export const RetryInfoSchema = detailSchema<RetryInfo>("google.rpc.RetryInfo");
export const BadRequestSchema = detailSchema<BadRequest>("google.rpc.BadRequest");
export const QuotaFailureSchema = detailSchema<QuotaFailure>("google.rpc.QuotaFailure");

/** The ErrorInfo of err when it is one of Seatghor's (domain seatghor.com). */
export function errorInfo(err: ConnectError): ErrorInfo | undefined {
  return err.findDetails(ErrorInfoSchema).find((i) => i.domain === ERROR_DOMAIN);
}

/**
 * How long the server asked the caller to wait before trying again, in
 * milliseconds: its RetryInfo detail, else its Retry-After header (seconds
 * or an HTTP date). undefined when it said nothing.
 */
export function serverRetryDelayMs(err: ConnectError, now: number = Date.now()): number | undefined {
  const info = err.findDetails(RetryInfoSchema)[0];
  if (info?.retryDelay !== undefined) {
    return Number(info.retryDelay.seconds) * 1000 + Math.floor(info.retryDelay.nanos / 1e6);
  }
  const header = err.metadata.get("Retry-After");
  if (header === null || header.trim() === "") return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * A Connect error the API answered with one of its reasons. It is still a
 * ConnectError (`err instanceof ConnectError` holds, `code` and `metadata`
 * are there); act on `reason`, never on the message (docs/errors.md).
 *
 *   catch (err) {
 *     if (err instanceof SeatsUnavailableError) redraw(err.seats, err.seatmapVersion);
 *     else if (err instanceof InvalidRequestError) highlight(err.fieldViolations);
 *   }
 *
 * Or switch on the reason of {@link asSeatghorError}'s discriminated union.
 */
export class SeatghorError<R extends ErrorReason = ErrorReason> extends ConnectError {
  /** The ErrorInfo reason: one word of docs/errors.md. */
  readonly reason: R;
  /** The fields at fault (BadRequest detail); empty when none is named. */
  readonly fieldViolations: FieldViolation[];
  /** The wait the server asked for (RetryInfo or Retry-After), in ms. */
  readonly retryDelayMs: number | undefined;

  constructor(from: ConnectError, reason: R) {
    super(from.rawMessage, from.code, from.metadata, undefined, from.cause ?? from);
    // Keep the incoming details so findDetails keeps working.
    this.details = from.details;
    this.reason = reason;
    this.fieldViolations = from
      .findDetails(BadRequestSchema)
      .flatMap((b) => b.fieldViolations)
      .map(({ field, description, reason }) => ({ field, description, reason }));
    this.retryDelayMs = serverRetryDelayMs(from);
    // The name stays "ConnectError": @connectrpc/connect recognises its
    // errors by it (ConnectError[Symbol.hasInstance]).
  }

  /** The violation of one field, e.g. err.field("seats[0]"). */
  field(path: string): FieldViolation | undefined {
    return this.fieldViolations.find((v) => v.field === path);
  }

  // ConnectError's hasInstance answers true for every ConnectError; the
  // subclasses test their own prototype chain.
  static override [Symbol.hasInstance](v: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(this, v);
  }
}

/**
 * A request the server refused as wrong (code invalid_argument): fix the
 * fields named in `fieldViolations`; retrying as is will not help.
 */
export class InvalidRequestError extends SeatghorError<InvalidArgumentReason> {}

/**
 * SEATS_UNAVAILABLE: someone else holds or bought the seats, or the GA area
 * has fewer places left. Reload the seat map at least at
 * `seatmapVersion` and let the buyer choose again.
 */
export class SeatsUnavailableError extends SeatghorError<"SEATS_UNAVAILABLE"> {
  /** The seats that are taken. */
  readonly seats: string[];
  /** The GA area asked for, when the hold was for one. */
  readonly gaArea: string;
  /** What remains in that GA area. */
  readonly remaining: number;
  /** The seat-map version the conflict was read at. */
  readonly seatmapVersion: bigint;

  constructor(from: ConnectError) {
    super(from, "SEATS_UNAVAILABLE");
    const d = from.findDetails(SeatsUnavailableSchema)[0];
    this.seats = d?.seats ?? [];
    this.gaArea = d?.gaArea ?? "";
    this.remaining = d?.remaining ?? 0;
    this.seatmapVersion = d?.seatmapVersion ?? 0n;
  }
}

/**
 * A waiting room refused the queue token (or its absence): join the waiting
 * room again, or keep polling while `reason` is QUEUE_TOKEN_NOT_ADMITTED.
 */
export class QueueTokenError extends SeatghorError<QueueTokenReason> {}

/** No caller, or a bad token: sign in again. */
export class UnauthenticatedError extends SeatghorError<UnauthenticatedReason> {}

/**
 * IDEMPOTENCY_KEY_IN_PROGRESS: the same call (same key) is still running.
 * The client retries it by itself; this reaches the caller only when the
 * retries ran out.
 */
export class StillRunningError extends SeatghorError<"IDEMPOTENCY_KEY_IN_PROGRESS"> {}

/** RATE_LIMITED: too many calls; `retryDelayMs` says how long to wait. */
export class RateLimitedError extends SeatghorError<"RATE_LIMITED"> {
  /** The limits hit (QuotaFailure detail). */
  readonly quotaViolations: QuotaViolation[];

  constructor(from: ConnectError) {
    super(from, "RATE_LIMITED");
    this.quotaViolations = from
      .findDetails(QuotaFailureSchema)
      .flatMap((q) => q.violations)
      .map(({ subject, description }) => ({ subject, description }));
  }
}

/** The class an error of reason R is. */
export type ErrorOf<R extends ErrorReason> = R extends "SEATS_UNAVAILABLE"
  ? SeatsUnavailableError
  : R extends "RATE_LIMITED"
    ? RateLimitedError
    : R extends "IDEMPOTENCY_KEY_IN_PROGRESS"
      ? StillRunningError
      : R extends QueueTokenReason
        ? QueueTokenError
        : R extends UnauthenticatedReason
          ? UnauthenticatedError
          : R extends InvalidArgumentReason
            ? InvalidRequestError
            : SeatghorError<R>;

/**
 * Every documented error as a union discriminated by `reason`: in
 * `switch (err.reason)` each case has its class (SEATS_UNAVAILABLE has
 * `seats`, …).
 */
export type KnownSeatghorError = { [R in ErrorReason]: ErrorOf<R> }[ErrorReason];

const invalidArgument = new Set<string>(INVALID_ARGUMENT_REASONS);
const queueToken = new Set<string>(QUEUE_TOKEN_REASONS);
const unauthenticated = new Set<string>(UNAUTHENTICATED_REASONS);

/**
 * err as a typed Seatghor error: a SeatghorError already, or a ConnectError
 * with a seatghor.com ErrorInfo turned into the class of its reason.
 * undefined for anything else (a network failure, a protocol error, a reason
 * newer than this client is still a SeatghorError with that reason).
 */
export function asSeatghorError(err: unknown): KnownSeatghorError | undefined {
  if (err instanceof SeatghorError) return err as KnownSeatghorError;
  if (!(err instanceof ConnectError)) return undefined;
  const info = errorInfo(err);
  if (info === undefined) return undefined;
  return typed(err, info.reason) as KnownSeatghorError;
}

function typed(err: ConnectError, reason: string): SeatghorError<ErrorReason> {
  switch (reason) {
    case "SEATS_UNAVAILABLE":
      return new SeatsUnavailableError(err);
    case "RATE_LIMITED":
      return new RateLimitedError(err);
    case "IDEMPOTENCY_KEY_IN_PROGRESS":
      return new StillRunningError(err, reason);
  }
  if (queueToken.has(reason)) return new QueueTokenError(err, reason as QueueTokenReason);
  if (unauthenticated.has(reason)) return new UnauthenticatedError(err, reason as UnauthenticatedReason);
  if (invalidArgument.has(reason) || (err.code === Code.InvalidArgument && !isKnown(reason))) {
    return new InvalidRequestError(err, reason as InvalidArgumentReason);
  }
  return new SeatghorError(err, reason as ErrorReason);
}

const known = new Set<string>(ERROR_REASONS);
function isKnown(reason: string): boolean {
  return known.has(reason);
}

/** Whether err is a Seatghor error of this reason (narrowed to its class). */
export function hasReason<R extends ErrorReason>(err: unknown, reason: R): err is ErrorOf<R> {
  return err instanceof SeatghorError && err.reason === reason;
}
