// The offline gate's rules (src/gate/rules.ts, docs/gate-offline.md): the
// stop a device stands at on a trip with stops (decision 0408).
import assert from "node:assert/strict";
import { test } from "node:test";

import { judge, stopName } from "../src/gate/rules.js";
import type { Entry, Scan } from "../src/gate/rules.js";

const show = "42";
const ticket = (n: number) => `tkt_${show}_abc_00${n}`;
const entry = (n: number, e: Partial<Entry> = {}): Entry => ({
  showId: show, ticketId: ticket(n), seat: `A${n}`, gaArea: "", status: "valid", ...e,
});
const scan = (s: Partial<Scan>): Scan => ({
  showId: show, ticketShow: show, ticketId: ticket(1), place: "A1", signed: true, stopId: "", entry: entry(1), mine: [], ...s,
});

test("a device at a stop refuses a ticket boarding at another, naming it, and admits one boarding there", () => {
  assert.deepEqual(judge(scan({ stopId: "dhaka", entry: entry(1, { boardingStopId: "cumilla" }) })),
    { kind: "bad", why: "boardsElsewhere", stop: "cumilla" });
  assert.deepEqual(judge(scan({ stopId: "cumilla", entry: entry(1, { boardingStopId: "cumilla" }) })),
    { kind: "admit", place: "A1" });
});

test("the stop is checked after the show and before the rest of the list", () => {
  const elsewhere = entry(1, { boardingStopId: "cumilla", status: "checked_in", checkedInGate: "x" });
  assert.equal(judge(scan({ ticketShow: "7", stopId: "dhaka", entry: elsewhere })).kind, "bad");
  assert.deepEqual(judge(scan({ ticketShow: "7", stopId: "dhaka" })), { kind: "bad", why: "otherShow", show: "7" });
  assert.deepEqual(judge(scan({ stopId: "dhaka", entry: elsewhere, place: "A9" })), { kind: "bad", why: "boardsElsewhere", stop: "cumilla" });
});

test("no stop chosen, a show without stops, or a ticket not on the list: the stop is no rule", () => {
  assert.equal(judge(scan({ stopId: "", entry: entry(1, { boardingStopId: "cumilla" }) })).kind, "admit");
  assert.equal(judge(scan({ stopId: "dhaka", entry: entry(1) })).kind, "admit");
  assert.equal(judge(scan({ stopId: "dhaka", entry: undefined, signed: true })).kind, "admit");
  assert.deepEqual(judge(scan({ stopId: "dhaka", entry: undefined, signed: false })), { kind: "bad", why: "unknownTicket" });
});

test("a scan of this device settled as boarding elsewhere is not an admission", () => {
  const mine = [{ scannedAt: 1, gate: "door", outcome: "boards_elsewhere" }];
  assert.equal(judge(scan({ stopId: "cumilla", entry: entry(1, { boardingStopId: "cumilla" }), mine })).kind, "admit");
  assert.deepEqual(judge(scan({ mine: [{ scannedAt: 1, gate: "door" }] })),
    { kind: "again", ticketId: ticket(1), place: "A1", at: 1, gate: "door" });
});

test("stops are named in the page's language", () => {
  const stops = [{ stopId: "cumilla", place: "Cumilla", placeBengali: "কুমিল্লা" }, { stopId: "x", place: "Nowhere", placeBengali: "" }];
  assert.equal(stopName(stops, "cumilla", "en"), "Cumilla");
  assert.equal(stopName(stops, "cumilla", "bn"), "কুমিল্লা");
  assert.equal(stopName(stops, "x", "bn"), "Nowhere");
  assert.equal(stopName(undefined, "feni", "bn"), "feni");
});
