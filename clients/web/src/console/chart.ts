// The seat-chart designer's drawing (decision 0456): what a manager types
// about each block of a venue (rows, seats a row, a bend, an aisle,
// wheelchair places, a price) made into the one layout model the API keeps
// and the buyer's map draws, positions and all. Pure, so that the preview
// on the page and the layout that is saved are one computation (and a unit
// test reads it).
/** A place's width and depth in layout units, as the API's layout model has it. */
export const PLACE = 10;
/** The space between blocks, and the stage's depth in front of the rows. */
const BLOCK_GAP = 2 * PLACE;
const STAGE_DEPTH = 3 * PLACE;

/** One block of rows as the designer's form has it. */
export interface Block {
  name: string;
  nameBn: string;
  rows: number;
  seatsPerRow: number;
  /** Price of a seat, whole taka. */
  priceTaka: number;
  /** How far the ends of every row bend back from the stage, in places: 0 is straight. */
  bend: number;
  /** An aisle (one place wide) after this many seats of each row; 0: none. */
  aisleAfter: number;
  /** Wheelchair places at the ends of the front row. */
  wheelchair: number;
}

/** SeatKind values of the API's layout model (catalog/v1/layout.proto). */
export const KIND_ORDINARY = 0;
export const KIND_WHEELCHAIR = 4;
/** FeatureKind STAGE. */
const FEATURE_STAGE = 5;

export interface ChartSeat { seat: string; x: number; y: number; kind: number }
export interface ChartRow { label: string; seats: ChartSeat[] }
export interface ChartSection { name: string; nameBn: string; priceMinor: bigint; rows: ChartRow[] }
export interface ChartFeature { kind: number; x: number; y: number; width: number; height: number; label: string; labelBn: string }
export interface Chart { sections: ChartSection[]; features: ChartFeature[]; width: number; height: number; seats: number }

/** The row labels A … Z, AA … AZ, BA …, the n-th (0-based). */
export function rowLabel(n: number): string {
  let s = "";
  for (let i = n + 1; i > 0; i = Math.floor((i - 1) / 26)) s = String.fromCharCode(65 + ((i - 1) % 26)) + s;
  return s;
}

/**
 * The chart of blocks laid side by side, left to right, facing a stage
 * across their front. Rows are labelled on from block to block (a seat id
 * is its row and its number, unique in the chart); a bend lifts each
 * place back by bend places times the square of its distance from the
 * chart's middle over half the chart's width, so that every row of every
 * block lies on one curve around the stage, as in an amphitheatre.
 */
export function chartOf(blocks: Block[]): Chart {
  const widths = blocks.map((b) => (b.seatsPerRow + (b.aisleAfter > 0 && b.aisleAfter < b.seatsPerRow ? 1 : 0)) * PLACE);
  const width = Math.max(PLACE, widths.reduce((a, w) => a + w, 0) + BLOCK_GAP * Math.max(0, blocks.length - 1));
  const middle = width / 2;
  let left = 0;
  let row = 0;
  let height = STAGE_DEPTH;
  const sections = blocks.map((b, bi) => {
    const wheelchair = ends(b.seatsPerRow, b.wheelchair);
    const rows: ChartRow[] = [];
    for (let r = 0; r < b.rows; r++) {
      const label = rowLabel(row++);
      const seats: ChartSeat[] = [];
      for (let i = 0; i < b.seatsPerRow; i++) {
        const aisle = b.aisleAfter > 0 && i >= b.aisleAfter ? PLACE : 0;
        const x = left + i * PLACE + aisle + PLACE / 2;
        const off = (x - middle) / (width / 2);
        const y = STAGE_DEPTH + r * PLACE + PLACE / 2 + Math.round(b.bend * PLACE * off * off);
        const kind = r === 0 && wheelchair.has(i) ? KIND_WHEELCHAIR : KIND_ORDINARY;
        seats.push({ seat: `${label}${i + 1}`, x: Math.round(x), y, kind });
        height = Math.max(height, y + PLACE / 2);
      }
      rows.push({ label, seats });
    }
    left += widths[bi] + BLOCK_GAP;
    return { name: b.name.trim(), nameBn: b.nameBn.trim(), priceMinor: BigInt(Math.round(b.priceTaka * 100)), rows };
  });
  const stage: ChartFeature = { kind: FEATURE_STAGE, x: Math.round(middle), y: STAGE_DEPTH / 3, width: Math.round(width * 0.6),
    height: Math.round(STAGE_DEPTH / 2), label: "Stage", labelBn: "মঞ্চ" };
  const seats = blocks.reduce((n, b) => n + b.rows * b.seatsPerRow, 0);
  return { sections, features: [stage], width, height, seats };
}

/** The first k places of a row of n taken from its ends inwards: 0, n−1, 1, n−2, …. */
function ends(n: number, k: number): Set<number> {
  const at = new Set<number>();
  for (let j = 0; j < Math.min(k, n); j++) at.add(j % 2 === 0 ? j / 2 : n - 1 - (j - 1) / 2);
  return at;
}

/** A saved layout's section as the API answers it: what blocksOf reads. */
export interface SavedSection {
  name: string;
  nameBn: string;
  priceMinor: bigint;
  rows: { label: string; seats: { seat: string; x: number; y: number; kind: number }[] }[];
}

/**
 * The designer's blocks of a chart it drew (decision 0466), read back from
 * the saved layout's sections so that the chart can be edited: rows and
 * seats a row as they are, the aisle where a gap is, the front row's
 * wheelchair places, the bend from the farthest seat's lift. Undefined
 * for a layout the designer did not draw (a coach, one made through the
 * API, one edited since): only a layout chartOf makes again seat for seat
 * comes back.
 */
export function blocksOf(sections: readonly SavedSection[]): Block[] | undefined {
  const shape = sections.map((s): Block | undefined => {
    const front = s.rows[0]?.seats ?? [];
    if (front.length === 0 || s.rows.some((r) => r.seats.length !== front.length)) return undefined;
    const gap = front.findIndex((p, i) => i > 0 && p.x - front[i - 1].x > PLACE);
    return {
      name: s.name, nameBn: s.nameBn, rows: s.rows.length, seatsPerRow: front.length,
      priceTaka: Number(s.priceMinor) / 100, bend: 0, aisleAfter: gap > 0 ? gap : 0,
      wheelchair: front.filter((p) => p.kind === KIND_WHEELCHAIR).length,
    };
  });
  if (shape.length === 0 || shape.some((b) => b === undefined)) return undefined;
  const blocks = shape as Block[];
  // x does not depend on the bend: where each place sits across the chart
  // says how much of the bend lifts it.
  const width = chartOf(blocks).width;
  blocks.forEach((b, i) => {
    const front = sections[i].rows[0].seats;
    let far = front[0];
    for (const p of front) if (Math.abs(p.x - width / 2) > Math.abs(far.x - width / 2)) far = p;
    const off = (far.x - width / 2) / (width / 2);
    const lift = far.y - (STAGE_DEPTH + PLACE / 2);
    b.bend = off === 0 ? 0 : Math.round(lift / (PLACE * off * off));
  });
  const again = chartOf(blocks);
  const same = again.sections.every((s, i) => s.rows.every((r, j) => {
    const saved = sections[i].rows[j];
    return r.label === saved.label && r.seats.every((p, k) => {
      const q = saved.seats[k];
      return p.seat === q.seat && p.x === q.x && p.y === q.y && p.kind === q.kind;
    });
  }));
  return same ? blocks : undefined;
}
