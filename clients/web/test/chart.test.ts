// The seat-chart designer's drawing (src/console/chart.ts, decision 0456):
// blocks side by side with rows labelled on, a bend that curves every row
// around the stage, aisles and wheelchair places where the form says.
import assert from "node:assert/strict";
import { test } from "node:test";

import { blocksOf, chartOf, KIND_WHEELCHAIR, PLACE, rowLabel } from "../src/console/chart.js";
import type { Block } from "../src/console/chart.js";

const block = (b: Partial<Block>): Block => ({ name: "Block", nameBn: "", rows: 2, seatsPerRow: 5, priceTaka: 500, bend: 0,
  aisleAfter: 0, wheelchair: 0, ...b });

test("row labels run A to Z, then AA", () => {
  assert.deepEqual([0, 25, 26, 27, 51, 52].map(rowLabel), ["A", "Z", "AA", "AB", "AZ", "BA"]);
});

test("straight blocks sit side by side with rows labelled on and ids unique", () => {
  const c = chartOf([block({ name: "Left" }), block({ name: "Right", rows: 3, seatsPerRow: 4 })]);
  assert.deepEqual(c.sections.map((s) => s.rows.map((r) => r.label)), [["A", "B"], ["C", "D", "E"]]);
  assert.equal(c.seats, 10 + 12);
  const seats = c.sections.flatMap((s) => s.rows.flatMap((r) => r.seats));
  assert.equal(new Set(seats.map((s) => s.seat)).size, seats.length);
  assert.equal(new Set(seats.map((s) => `${s.x},${s.y}`)).size, seats.length, "no two places at one spot");
  const a = c.sections[0].rows[0].seats;
  assert.ok(a.every((s) => s.y === a[0].y), "a straight row is level");
  assert.equal(a[1].x - a[0].x, PLACE);
  const right = c.sections[1].rows[0].seats[0];
  assert.ok(right.x > a[a.length - 1].x + PLACE, "a gap between blocks");
  assert.equal(c.sections[0].priceMinor, 50000n);
});

test("a bend curves each row around the stage: its middle nearest", () => {
  const row = chartOf([block({ seatsPerRow: 9, bend: 3 })]).sections[0].rows[0].seats;
  assert.ok(row[4].y < row[2].y && row[2].y < row[0].y, "the middle nearer the stage than the ends");
  assert.equal(row[0].y, row[8].y, "symmetric");
  assert.ok(row.every((s) => Number.isInteger(s.x) && Number.isInteger(s.y) && s.x >= 0 && s.y >= 0));
});

test("an aisle leaves one place's gap; wheelchair places take the front row's ends", () => {
  const c = chartOf([block({ seatsPerRow: 6, aisleAfter: 3, wheelchair: 3 })]);
  const [front, back] = c.sections[0].rows;
  assert.equal(front.seats[3].x - front.seats[2].x, 2 * PLACE);
  const wheelchair = front.seats.filter((s) => s.kind === KIND_WHEELCHAIR).map((s) => s.seat);
  assert.deepEqual(wheelchair, ["A1", "A2", "A6"]);
  assert.ok(back.seats.every((s) => s.kind !== KIND_WHEELCHAIR));
});

test("a chart the designer drew reads back as its blocks, to be edited (decision 0466)", () => {
  for (const blocks of [
    [block({ name: "Stalls", nameBn: "স্টল", rows: 3, seatsPerRow: 9, bend: 4, wheelchair: 2, priceTaka: 600 })],
    [block({ name: "Left", seatsPerRow: 7, bend: 2, aisleAfter: 3 }), block({ name: "Middle", rows: 4, seatsPerRow: 12, bend: 5 }),
      block({ name: "Right", seatsPerRow: 7, bend: 2, wheelchair: 1, priceTaka: 350.5 })],
    [block({ seatsPerRow: 1 })],
  ]) {
    assert.deepEqual(blocksOf(chartOf(blocks).sections), blocks.map((b) => ({ ...b, name: b.name.trim(), nameBn: b.nameBn.trim() })));
  }
});

test("a layout the designer did not draw does not read back", () => {
  const c = chartOf([block({ seatsPerRow: 6, bend: 3 })]);
  const moved = structuredClone(c.sections);
  moved[0].rows[1].seats[2].y += 3;
  assert.equal(blocksOf(moved), undefined, "a seat moved by hand");
  const ragged = structuredClone(c.sections);
  ragged[0].rows[1].seats.pop();
  assert.equal(blocksOf(ragged), undefined, "rows of different lengths");
  assert.equal(blocksOf([]), undefined, "nothing");
});
