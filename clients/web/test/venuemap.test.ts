// The venue map's geometry and painter (src/venuelayout.ts,
// src/venuepaint.ts, decision 0403): where the places go, which rows are
// stamped whole, and that a stamped row paints the pixels a place-by-place
// paint would.
import assert from "node:assert/strict";
import { test } from "node:test";

import { geometry } from "../src/venuelayout.js";
import type { Geometry, SectionIn } from "../src/venuelayout.js";
import { KIND_BLOCKED, KIND_WOMEN, Painter } from "../src/venuepaint.js";

function straight(sections: number, rows: number, seats: number): SectionIn[] {
  const out: SectionIn[] = [];
  let row = 0;
  for (let s = 0; s < sections; s++) {
    const rs = [];
    for (let r = 0; r < rows; r++, row++) {
      const label = String.fromCharCode(65 + Math.floor(row / 26)) + String.fromCharCode(65 + (row % 26));
      rs.push({ label, seats: Array.from({ length: seats }, (_, c) => `${label}${c + 1}`) });
    }
    out.push({ name: `Block ${s + 1}`, priceMinor: 100n, rows: rs });
  }
  return out;
}

test("a straight layout: rows a pitch apart from the margin, every id in order, every row straight", () => {
  const g = geometry(straight(1, 2, 3), 1);
  assert.equal(g.n, 6);
  assert.deepEqual(g.seats, ["AA1", "AA2", "AA3", "AB1", "AB2", "AB3"]);
  // Margin 4, row labels 8, half a pitch 5; the title band 8 above.
  assert.deepEqual([...g.x], [17, 27, 37, 17, 27, 37]);
  assert.deepEqual([...g.y], [17, 17, 17, 27, 27, 27]);
  assert.deepEqual([...g.rowStart], [0, 3, 6]);
  assert.deepEqual([...g.row], [0, 0, 0, 1, 1, 1]);
  assert.deepEqual([...g.rowStraight], [1, 1]);
  assert.deepEqual([...g.rowKinds], [0, 0]);
  assert.ok(Math.abs(g.width - (37 + 4.6 + 4)) < 1e-4);
  assert.ok(Math.abs(g.height - (27 + 4.6 + 4)) < 1e-4);
  assert.deepEqual(g.sections[0].box.map((v) => Math.round(v * 10) / 10), [12.4, 12.4, 41.6, 31.6]);
  assert.equal(g.sections[0].cols, 3);
});

test("a positioned layout: shifted to the margin under a title band; a curved row is not straight; kinds counted", () => {
  const g = geometry([{
    name: "Main", priceMinor: 1n, rows: [
      { label: "A", seats: ["A1", "A2", "A3"], x: [40, 50, 60], y: [50, 48, 50], kinds: [KIND_WOMEN, 0, KIND_BLOCKED] },
      { label: "B", seats: ["B1", "B2", "B3"], x: [40, 50, 60], y: [62, 62, 62] },
    ],
  }], 1, [{ width: 160, height: 100 }], [{ kind: 5, deck: 0, x: 50, y: 15, width: 40, height: 10, label: "Stage", labelBn: "" }]);
  // The stage's left (30) and top (10) are the least: they go to the
  // margin (4), and a title band (8) above.
  assert.deepEqual([...g.x], [14, 24, 34, 14, 24, 34]);
  assert.deepEqual([...g.y], [52, 50, 52, 64, 64, 64]);
  assert.deepEqual(g.features.map((f) => [f.x, f.y]), [[24, 17]]);
  assert.deepEqual([...g.rowStraight], [0, 1]);
  assert.deepEqual([...g.rowKinds], [2, 0]);
  assert.equal(g.blocked, 1);
  assert.deepEqual([...g.kind], [KIND_WOMEN, 0, KIND_BLOCKED, 0, 0, 0]);
  // The deck's extent counts: 160 from its origin (shifted by -26).
  assert.equal(g.width, 160 - 26 + 4);
});

// A painter on a stand-in canvas: the image it puts is returned.
function paint(g: Geometry, s: number, tx: number, ty: number, looks: Uint8Array, marked: Uint32Array): Uint32Array {
  let put: Uint32Array = new Uint32Array(0);
  const ctx = {
    createImageData: (w: number, h: number) => ({ data: new Uint8ClampedArray(w * h * 4), width: w, height: h }),
    putImageData: (img: { data: Uint8ClampedArray }) => { put = new Uint32Array(img.data.buffer.slice(0)); },
    setTransform() {}, fillText() {}, fillRect() {}, measureText: (t: string) => ({ width: t.length * 7 }),
  };
  const canvas = { getContext: () => ctx, style: {}, width: 0, height: 0 } as unknown as HTMLCanvasElement;
  const p = new Painter(canvas, g, { title: () => "", feature: () => "" }, 1);
  p.resize(120, 90);
  p.paintAll({ s, tx, ty }, looks, marked);
  return put;
}

test("a stamped row paints what the places one by one paint, clipped, with other looks and kinds over it", () => {
  const sections = straight(2, 6, 17);
  sections[0].rows[2].kinds = [0, KIND_WOMEN, 0, KIND_BLOCKED];
  const g = geometry(sections, 1.2);
  const looks = new Uint8Array(g.n);
  const marked = new Uint32Array(g.rowLabel.length);
  for (const i of [3, 20, 21, 40, 99, 150]) {
    looks[i] = (i % 4) + 1;
    marked[g.row[i]]++;
  }
  const unstamped: Geometry = { ...g, rowStraight: new Uint8Array(g.rowStraight.length) };
  // Places of 2 and 3 px, a view cut at the left and the top, and one
  // whose scale puts places a pixel apart unevenly.
  for (const [s, tx, ty] of [[0.25, 0, 0], [0.33, -20, -9], [0.3, 7.3, 3.6], [0.217, 2, 1]]) {
    const a = paint(g, s, tx, ty, looks, marked);
    const b = paint(unstamped, s, tx, ty, looks, marked);
    assert.equal(a.length, 120 * 90);
    assert.deepEqual(a, b, `scale ${s} at ${tx}, ${ty}`);
    assert.ok(a.some((v, k) => v !== a[0] && k > 0), "something drawn");
  }
});
