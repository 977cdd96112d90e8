// What the pages about mobile numbers share (the phone sign-in, a guest's
// start, finding tickets; decisions 0436, 0437): the phone sign-in's
// client and the clock of a wait the server named. Loaded with those
// pages (lazy chunks), never with the site, so the phone sign-in's service
// stays out of the first load.
import { useEffect, useState } from "preact/hooks";
import { PhoneSignInService, RateLimitedError, createServiceClient } from "@seatghor/client";

import { saveSession } from "./session.js";
import type { Session } from "./session.js";

/** The phone sign-in's client: its calls are public, sent with no token. */
export function phoneClient() {
  return createServiceClient(PhoneSignInService, { baseUrl: location.origin });
}

/** Starts a guest (StartGuest) and keeps the guest's token as the session. */
export async function startGuest(): Promise<Session> {
  const r = await phoneClient().startGuest({});
  const s = saveSession(r.token);
  if (!s) throw new Error("guest: the token cannot be read");
  return s;
}

/** A protobuf Duration in milliseconds (0 when unset). */
export function durationMs(d: { seconds: bigint; nanos: number } | undefined): number {
  return d ? Number(d.seconds) * 1000 + Math.floor(d.nanos / 1e6) : 0;
}

/** When a refusal for too many tries says to come back (Date.now() based), or 0. */
export function retryAt(err: unknown): number {
  return err instanceof RateLimitedError && err.retryDelayMs ? Date.now() + err.retryDelayMs : 0;
}

/** The time, again every second until `until` (a countdown's clock). */
export function useNow(until: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    setNow(Date.now());
    if (until <= Date.now()) return;
    const timer = setInterval(() => {
      const n = Date.now();
      setNow(n);
      if (n >= until) clearInterval(timer);
    }, 1000);
    return () => clearInterval(timer);
  }, [until]);
  return now;
}
