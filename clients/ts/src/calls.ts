// The interceptors every Seatghor client runs, outermost first:
//
//   typedErrors → idempotencyKeys → retries → (the caller's) → auth → transport
//
// so a logical call gets one Idempotency-Key, every retry of it sends that
// same key (the server answers a repeat with the first answer, R-5.1), and
// the caller sees the typed error of the last attempt. Decision 0140 says
// what is retried and how long the client waits.
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { CallOptions, Interceptor } from "@connectrpc/connect";

import { asSeatghorError, errorInfo, serverRetryDelayMs } from "./errors.js";

/** The header every write RPC needs. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

/** The header that carries a waiting room's admitted token to CreateHold. */
export const QUEUE_TOKEN_HEADER = "Queue-Token";

/**
 * A fresh idempotency key (a random UUID): one per logical write. The
 * client makes one by itself for every write; make your own only to retry a
 * call across restarts of your program (then pass it with {@link idempotent}).
 */
export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === "function") return c.randomUUID();
  // randomUUID needs a secure context in browsers; getRandomValues does not.
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Call options carrying an Idempotency-Key header. Not needed for a single
 * call (the client adds a key and reuses it on its own retries); pass the
 * same key again to repeat a logical request yourself.
 */
export function idempotent(key: string = newIdempotencyKey(), options: CallOptions = {}): CallOptions {
  const headers = new Headers(options.headers);
  headers.set(IDEMPOTENCY_KEY_HEADER, key);
  return { ...options, headers };
}

/**
 * Call options carrying a waiting room's admitted token (the
 * `admittedToken` of WaitingRoomService.GetStatus) to CreateHold.
 */
export function withQueueToken(token: string, options: CallOptions = {}): CallOptions {
  const headers = new Headers(options.headers);
  headers.set(QUEUE_TOKEN_HEADER, token);
  return { ...options, headers };
}

/** How the client retries (decision 0140). */
export interface RetryOptions {
  /** Attempts in all, the first included (default 4). 1 turns retries off. */
  maxAttempts?: number;
  /** The first backoff when the server names no delay (default 250 ms); it doubles each retry. */
  initialDelayMs?: number;
  /**
   * The longest wait between attempts (default 10 s). A server that asks for
   * more (RetryInfo or Retry-After) is not retried: its error reaches the
   * caller with `retryDelayMs` set.
   */
  maxDelayMs?: number;
  /** Called before each wait; for logs and tests. */
  onRetry?: (info: RetryEvent) => void;
  /** How to wait; tests pass one that does not. Must reject when signal aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** One retry about to happen. */
export interface RetryEvent {
  /** The attempt that failed, from 1. */
  attempt: number;
  /** How long the client waits before the next one, in ms. */
  delayMs: number;
  /** Whether delayMs is the server's (RetryInfo / Retry-After) or the client's backoff. */
  fromServer: boolean;
  /** The error of the failed attempt. */
  error: ConnectError;
  /** The method's name, e.g. "CreateHold". */
  method: string;
  /** The Idempotency-Key the retry sends again, if the method takes one. */
  idempotencyKey: string | undefined;
}

/**
 * Whether a failed call may be sent again as it is: the server or the
 * network was unavailable (not a server that does not run the feature,
 * NOT_SERVED), the same call is still running (IDEMPOTENCY_KEY_IN_PROGRESS),
 * the connection broke mid-call (aborted with no reason), or a rate limit
 * said when to come back (RATE_LIMITED). Safe for every method: reads have
 * no side effects and writes carry their key.
 */
export function isRetryable(err: unknown): err is ConnectError {
  if (!(err instanceof ConnectError)) return false;
  const reason = errorInfo(err)?.reason;
  switch (err.code) {
    case Code.Unavailable:
      return reason !== "NOT_SERVED";
    case Code.Aborted:
      return reason === undefined || reason === "IDEMPOTENCY_KEY_IN_PROGRESS";
    case Code.ResourceExhausted:
      return reason === "RATE_LIMITED";
  }
  return false;
}

/** Whether a method changes state, so the server wants an Idempotency-Key. */
export function needsIdempotencyKey(method: { idempotency: MethodOptions_IdempotencyLevel }): boolean {
  return (
    method.idempotency !== MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS &&
    method.idempotency !== MethodOptions_IdempotencyLevel.IDEMPOTENT
  );
}

/** Turns every error with a seatghor.com reason into its SeatghorError class. */
export const typedErrors: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (err) {
    throw asSeatghorError(err) ?? err;
  }
};

/**
 * Gives every write that has none an Idempotency-Key, once per logical call:
 * it runs outside the retries, so they all send the same key.
 */
export const idempotencyKeys: Interceptor = (next) => async (req) => {
  if (needsIdempotencyKey(req.method) && !req.header.has(IDEMPOTENCY_KEY_HEADER)) {
    req.header.set(IDEMPOTENCY_KEY_HEADER, newIdempotencyKey());
  }
  return next(req);
};

/** Retries unary calls by {@link isRetryable}, waiting as the server says or backing off. */
export function retries(options: RetryOptions = {}): Interceptor {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const initialDelayMs = options.initialDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  const sleep = options.sleep ?? abortableSleep;
  return (next) => async (req) => {
    if (req.stream) return next(req);
    for (let attempt = 1; ; attempt++) {
      try {
        // Each attempt gets its own copy of the headers, so what an inner
        // interceptor adds to one does not leak into the next.
        return await next({ ...req, header: new Headers(req.header) });
      } catch (err) {
        if (attempt >= maxAttempts || req.signal.aborted || !isRetryable(err)) throw err;
        const server = serverRetryDelayMs(err);
        if (server !== undefined && server > maxDelayMs) throw err;
        const delayMs = server ?? backoff(initialDelayMs, maxDelayMs, attempt);
        options.onRetry?.({
          attempt,
          delayMs,
          fromServer: server !== undefined,
          error: err,
          method: req.method.name,
          idempotencyKey: req.header.get(IDEMPOTENCY_KEY_HEADER) ?? undefined,
        });
        try {
          await sleep(delayMs, req.signal);
        } catch {
          throw err; // cancelled or timed out while waiting: the last answer stands
        }
      }
    }
  };
}

/** Exponential backoff with jitter: between half and all of initial·2^(attempt-1), capped. */
function backoff(initialDelayMs: number, maxDelayMs: number, attempt: number): number {
  const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** An interceptor that adds "Authorization: Bearer <token>" when there is a token. */
export function bearerAuth(token: string | (() => string | undefined | Promise<string | undefined>)): Interceptor {
  return (next) => async (req) => {
    const t = typeof token === "function" ? await token() : token;
    if (t) req.header.set("Authorization", `Bearer ${t}`);
    return next(req);
  };
}

/**
 * Wraps fetch so that a request that never got an answer (the network is
 * down, the connection was refused or reset) is a ConnectError
 * "unavailable", which the retries know, instead of fetch's TypeError.
 * A cancelled request stays what it was.
 */
export function fetchWithUnavailable(f?: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    try {
      return await (f ?? globalThis.fetch)(input, init);
    } catch (err) {
      if (init?.signal?.aborted || !(err instanceof TypeError)) throw err;
      throw new ConnectError(`network error: ${err.message}`, Code.Unavailable, undefined, undefined, err);
    }
  };
}
