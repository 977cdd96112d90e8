// The rules a gate device decides a scan by with no network
// (docs/gate-offline.md, "Deciding a scan with no network"), once the code
// is read and the list and this device's scans are looked up: pure
// functions, no IndexedDB, no WebCrypto, so that they are tested on their
// own (clients/web/test, `npm test`).
import type { Lang } from "../i18n.js";

/** A ticket of the list, as kept. */
export interface Entry {
  showId: string;
  ticketId: string;
  seat: string;
  gaArea: string;
  status: "valid" | "checked_in" | "cancelled" | "refunded";
  checkedInAt?: number;
  checkedInGate?: string;
  /** On a trip with stops, the stop its journey boards at (decision 0408). */
  boardingStopId?: string;
}

/** A scan of this device, as the rules read it. */
export interface OwnScan {
  scannedAt: number;
  gate: string;
  outcome?: string;
}

/** Why a scan is refused. */
export type Refusal =
  | "forged"
  | "unknownKey"
  | "notACode"
  | "unknownTicket"
  | "cancelled"
  | "refunded"
  | "otherShow"
  | "boardsElsewhere";

/** How a scan with no network is decided. */
export type OfflineVerdict =
  | { kind: "ok"; ticketId: string; place: string; inList: boolean }
  | { kind: "again"; ticketId: string; place: string; at: number | undefined; gate: string }
  | { kind: "bad"; why: Refusal; show?: string; stop?: string };

/** What the rules are given about a scan whose code was read. */
export interface Scan {
  /** The show the gate checks in. */
  showId: string;
  /** The show the ticket's id names; undefined: not a ticket id. */
  ticketShow: string | undefined;
  ticketId: string;
  /** The place the code names; "" for a ticket id typed in. */
  place: string;
  /** Whether an Ed25519 signature vouches for the code. */
  signed: boolean;
  /** The stop the gate stands at (a trip's stop id); "": none chosen. */
  stopId: string;
  /** The ticket on the device's list, if it is there. */
  entry: Entry | undefined;
  /** This device's own earlier scans of the ticket. */
  mine: OwnScan[];
}

/** Outcomes of a synced scan that did not admit anyone. */
const NOT_ADMITTED = new Set(["refunded", "invalid", "boards_elsewhere"]);

/**
 * Decides a scan: a verdict, or "admit" (the caller records the scan and
 * answers ok). In order: the show, the stop, the place, the status, used
 * already, not on the list (docs/gate-offline.md).
 */
export function judge(s: Scan): Exclude<OfflineVerdict, { kind: "ok" }> | { kind: "admit"; place: string } {
  if (!s.ticketShow) return { kind: "bad", why: "unknownTicket" };
  if (s.ticketShow !== s.showId) return { kind: "bad", why: "otherShow", show: s.ticketShow };
  const e = s.entry;
  // A device at a stop boards only the tickets boarding there (decision
  // 0408), before anything else of the list is read.
  const boards = boardsElsewhere(e, s.stopId);
  if (boards) return { kind: "bad", why: "boardsElsewhere", stop: boards };
  if (e && s.place && s.place !== e.seat + e.gaArea) return { kind: "bad", why: "forged" };
  const place = s.place || (e ? e.seat + e.gaArea : "");
  if (e?.status === "cancelled" || e?.status === "refunded") return { kind: "bad", why: e.status };
  const own = s.mine.find((x) => !NOT_ADMITTED.has(x.outcome ?? ""));
  if (own) return { kind: "again", ticketId: s.ticketId, place, at: own.scannedAt, gate: own.gate };
  if (e?.status === "checked_in") return { kind: "again", ticketId: s.ticketId, place, at: e.checkedInAt, gate: e.checkedInGate ?? "" };
  // Not on the list: a signed code is a ticket issued since it was
  // downloaded; anything else cannot be checked with no network.
  if (!e && !s.signed) return { kind: "bad", why: "unknownTicket" };
  return { kind: "admit", place };
}

/**
 * The stop a ticket boards at when that is not the gate's stop; undefined
 * when the gate has no stop, the ticket is not on the list, or its list
 * entry names no stop (a show without stops) or the gate's.
 */
export function boardsElsewhere(e: Entry | undefined, stopId: string): string | undefined {
  return stopId && e?.boardingStopId && e.boardingStopId !== stopId ? e.boardingStopId : undefined;
}

/** A trip's stop as the gate names it (catalog.v1.TripStop). */
export interface StopName {
  stopId: string;
  place: string;
  placeBengali: string;
}

/**
 * A stop's name in the UI's language: the gazetteer's Bengali name in the
 * Bengali UI (the place as entered where it has none); the stop's id when
 * the trip's stops are not known.
 */
export function stopName(stops: readonly StopName[] | undefined, stopId: string, lang: Lang): string {
  const s = stops?.find((x) => x.stopId === stopId);
  if (!s) return stopId;
  return (lang === "bn" && s.placeBengali) || s.place;
}
