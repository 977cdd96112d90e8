// Times as the console's forms take and show them: Bangladesh time, UTC+6
// all year (no daylight saving since 2009), whatever the browser's zone.

/** The instant of a datetime-local value read as Bangladesh time. */
export function dhakaTimestamp(local: string) {
  const ms = Date.parse(`${local}:00+06:00`);
  return { seconds: BigInt(Math.floor(ms / 1000)), nanos: 0 };
}

/** A datetime-local value of an instant, in Bangladesh time. */
export function dhakaLocal(ts: { seconds: bigint } | undefined): string {
  return ts ? new Date(Number(ts.seconds) * 1000 + 6 * 3600_000).toISOString().slice(0, 16) : "";
}
