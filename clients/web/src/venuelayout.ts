// Where every place of a venue's seat map is, in layout units (a place is
// 10 units wide and deep; catalog.v1.Layout): taken from the layout's
// positions when every row has them (curved rows, a stage, decks side by
// side), else laid out straight, a section a block, the blocks packed in
// shelves to the shape of the box the map is drawn in. Kept in typed
// arrays, one entry a seat, so 50,000 seats cost a few hundred kilobytes
// and one loop (decision 0403).

/** The pitch of places, layout units. */
export const PITCH = 10;
/** The drawn side of a place, layout units (the rest is the gap). */
export const DRAWN = 9.2;
// Straight layout: the band left of a section's rows for their labels,
// above it for its title, and the gap between blocks.
const ROW_LABEL = 8;
const TITLE = 8;
const GAP = 16;
// Around everything drawn.
const MARGIN = 4;
// SeatKind BLOCKED (catalog.v1; venuepaint.ts names the kinds).
const KIND_BLOCKED = 5;

/** A row of the layout as the API gives it (seatmap.v1.Row). */
export interface RowIn {
  label: string;
  seats: string[];
  x?: number[];
  y?: number[];
  kinds?: number[];
}

/** A section as the API gives it (seatmap.v1.Section). */
export interface SectionIn {
  name: string;
  nameBn?: string;
  priceMinor: bigint;
  rows: RowIn[];
  deck?: number;
}

/** A deck (catalog.v1.Deck). */
export interface DeckIn {
  width: number;
  height: number;
}

/** Something drawn that is not a place (catalog.v1.LayoutFeature). */
export interface FeatureIn {
  kind: number;
  deck: number;
  x: number;
  y: number;
  width: number;
  height: number;
  label: string;
  labelBn: string;
}

export interface SectionGeom {
  name: string;
  nameBn: string;
  priceMinor: bigint;
  firstRow: number;
  rowCount: number;
  firstSeat: number;
  seatCount: number;
  /** The most places in a row (the grid's column count). */
  cols: number;
  /** Bounds of its places: min x, min y, max x, max y. */
  box: [number, number, number, number];
}

export interface Geometry {
  n: number;
  seats: string[];
  /** Centres, layout units from the drawing's top left. */
  x: Float32Array;
  y: Float32Array;
  /** SeatKind of each place. */
  kind: Uint8Array;
  section: Uint16Array;
  /** The global row of each place. */
  row: Uint32Array;
  /** First place of each row; one more entry than rows. */
  rowStart: Uint32Array;
  rowSection: Uint16Array;
  rowLabel: string[];
  /** Bounds of each row's places, four numbers a row. */
  rowBox: Float32Array;
  /** 1 for a row on one line, a pitch between places (every row of a
   * straight layout): the painter stamps such a row whole. */
  rowStraight: Uint8Array;
  /** How many places of each row are of a kind other than ordinary. */
  rowKinds: Uint32Array;
  /** How many places are blocked (SeatKind BLOCKED). */
  blocked: number;
  sections: SectionGeom[];
  features: FeatureIn[];
  /** The drawing's extent. */
  width: number;
  height: number;
  /** Whether the positions came from the layout (else: straight rows). */
  positioned: boolean;
}

/** Whether every row of the layout has a position for every place. */
export function hasPositions(sections: SectionIn[]): boolean {
  return sections.length > 0 && sections.every((s) => s.rows.every((r) =>
    r.seats.length > 0 && r.x?.length === r.seats.length && r.y?.length === r.seats.length));
}

// The least and the greatest of a row's numbers (a builtin's loop, not
// the interpreter's).
function least(a: number[]): number {
  if (a.length < 8192) return Math.min(...a);
  let m = Infinity;
  for (const v of a) if (v < m) m = v;
  return m;
}

function greatest(a: number[]): number {
  if (a.length < 8192) return Math.max(...a);
  let m = -Infinity;
  for (const v of a) if (v > m) m = v;
  return m;
}

/**
 * The geometry of a layout. aspect is the box's width over its height,
 * which straight layouts are packed to; decks and features count only for
 * a positioned layout.
 */
export function geometry(sections: SectionIn[], aspect: number, decks: DeckIn[] = [], features: FeatureIn[] = []): Geometry {
  let n = 0;
  let rows = 0;
  for (const s of sections) {
    rows += s.rows.length;
    for (const r of s.rows) n += r.seats.length;
  }
  const positioned = hasPositions(sections);
  const g: Geometry = {
    n, seats: [], x: new Float32Array(n), y: new Float32Array(n), kind: new Uint8Array(n),
    section: new Uint16Array(n), row: new Uint32Array(n), rowStart: new Uint32Array(rows + 1),
    rowSection: new Uint16Array(rows), rowLabel: new Array<string>(rows), rowBox: new Float32Array(rows * 4),
    rowStraight: new Uint8Array(rows), rowKinds: new Uint32Array(rows), blocked: 0,
    sections: [], features: [], width: 0, height: 0, positioned,
  };
  const origins = positioned ? deckOrigins(sections, decks) : shelves(sections, aspect);
  const half = DRAWN / 2;
  // The shift that puts the drawing at the margin (a positioned layout's
  // top seats under a title's band), known before any place is written:
  // a straight layout's blocks start at 0, 0 with their label and title
  // bands; a positioned one's least x and y are read a row at a time.
  let dx = MARGIN, dy = MARGIN;
  if (positioned) {
    let minx = Infinity, miny = Infinity;
    for (const s of sections) {
      const [ox, oy] = origins[s.deck ?? 0] ?? [0, 0];
      for (const r of s.rows) {
        minx = Math.min(minx, ox + least(r.x!) - half);
        miny = Math.min(miny, oy + least(r.y!) - half);
      }
    }
    for (const f of features) {
      const [ox, oy] = origins[f.deck] ?? [0, 0];
      minx = Math.min(minx, ox + f.x - f.width / 2);
      miny = Math.min(miny, oy + f.y - f.height / 2);
    }
    dx = MARGIN - minx;
    dy = MARGIN + TITLE - miny;
  }
  const { x: gx, y: gy, kind: gk, section: gs, row: gr, rowBox, rowStraight, rowKinds } = g;
  // Plain loops and fills, row by row: this runs for every seat before the
  // first frame, mostly before the JIT has compiled it, so a straight row
  // is copied and filled (builtins), never a loop a place.
  const ids: string[][] = [];
  let i = 0;
  let ri = 0;
  let straightX = new Float32Array(0);
  let maxx = -Infinity, maxy = -Infinity;
  for (let si = 0; si < sections.length; si++) {
    const s = sections[si];
    let bx0 = Infinity, by0 = Infinity, bx1 = -Infinity, by1 = -Infinity, cols = 0;
    const first = i;
    const firstRow = ri;
    const [ox0, oy0] = origins[positioned ? (s.deck ?? 0) : si] ?? [0, 0];
    const ox = ox0 + dx, oy = oy0 + dy;
    for (let k = 0; k < s.rows.length; k++) {
      const r = s.rows[k];
      const len = r.seats.length;
      const end = i + len;
      const kinds = r.kinds ?? [];
      ids.push(r.seats);
      g.rowStart[ri] = i;
      g.rowSection[ri] = si;
      g.rowLabel[ri] = r.label;
      gs.fill(si, i, end);
      gr.fill(ri, i, end);
      let marked = 0;
      for (let c = 0; c < kinds.length && c < len; c++) {
        if (kinds[c]) {
          gk[i + c] = kinds[c];
          marked++;
          if (kinds[c] === KIND_BLOCKED) g.blocked++;
        }
      }
      rowKinds[ri] = marked;
      let minx = Infinity, miny = Infinity, rmaxx = -Infinity, rmaxy = -Infinity;
      if (positioned) {
        const rx = r.x!, ry = r.y!;
        let straight = 1;
        const x0 = ox + rx[0], y0 = oy + ry[0];
        for (let c = 0; c < len; c++) {
          const x = ox + rx[c];
          const y = oy + ry[c];
          gx[i + c] = x;
          gy[i + c] = y;
          if (x < minx) minx = x;
          if (x > rmaxx) rmaxx = x;
          if (y < miny) miny = y;
          if (y > rmaxy) rmaxy = y;
          if (y !== y0 || x !== x0 + c * PITCH) straight = 0;
        }
        // Straight only as stored (the painter compares stored places).
        if (straight && len > 0 && (gy[i] !== gy[end - 1] || gx[end - 1] !== gx[i] + (len - 1) * PITCH)) straight = 0;
        rowStraight[ri] = straight;
      } else if (len > 0) {
        // A straight row: one y, x a pitch apart (copied from the
        // section's row of x).
        const x0 = ox + ROW_LABEL + PITCH / 2;
        const y = oy + TITLE + k * PITCH + PITCH / 2;
        if (straightX.length < len || straightX[0] !== x0) {
          let most = len;
          for (const rr of s.rows) most = Math.max(most, rr.seats.length);
          straightX = new Float32Array(most);
          for (let c = 0; c < most; c++) straightX[c] = x0 + c * PITCH;
        }
        gx.set(straightX.subarray(0, len), i);
        gy.fill(y, i, end);
        minx = straightX[0];
        rmaxx = straightX[len - 1];
        miny = rmaxy = gy[i];
        rowStraight[ri] = 1;
      }
      i = end;
      rowBox[ri * 4] = minx - half;
      rowBox[ri * 4 + 1] = miny - half;
      rowBox[ri * 4 + 2] = rmaxx + half;
      rowBox[ri * 4 + 3] = rmaxy + half;
      bx0 = Math.min(bx0, minx - half);
      by0 = Math.min(by0, miny - half);
      bx1 = Math.max(bx1, rmaxx + half);
      by1 = Math.max(by1, rmaxy + half);
      cols = Math.max(cols, len);
      ri++;
    }
    maxx = Math.max(maxx, bx1);
    maxy = Math.max(maxy, by1);
    g.sections.push({
      name: s.name, nameBn: s.nameBn ?? "", priceMinor: s.priceMinor, firstRow, rowCount: s.rows.length,
      firstSeat: first, seatCount: i - first, cols, box: [bx0, by0, bx1, by1],
    });
  }
  g.rowStart[rows] = i;
  // Every id in one array: one concat, a chunk of rows at a time (a
  // call's arguments are limited).
  for (let k = 0; k < ids.length; k += 4096) g.seats = g.seats.concat(...ids.slice(k, k + 4096));
  if (positioned) {
    for (const f of features) {
      const [ox, oy] = origins[f.deck] ?? [0, 0];
      const x = ox + f.x + dx, y = oy + f.y + dy;
      g.features.push({ ...f, x, y });
      maxx = Math.max(maxx, x + f.width / 2);
      maxy = Math.max(maxy, y + f.height / 2);
    }
    decks.forEach((d, k) => {
      const [ox, oy] = origins[k] ?? [0, 0];
      if (d.width > 0) maxx = Math.max(maxx, ox + dx + d.width);
      if (d.height > 0) maxy = Math.max(maxy, oy + dy + d.height);
    });
  }
  if (!isFinite(maxx)) maxx = MARGIN;
  if (!isFinite(maxy)) maxy = MARGIN;
  g.width = maxx + MARGIN;
  g.height = maxy + MARGIN;
  return g;
}

// The straight layout: each section a block (labels, title, rows), the
// blocks in layout order in shelves of c, c picked so the whole drawing
// is largest in a box of the given aspect.
function shelves(sections: SectionIn[], aspect: number): [number, number][] {
  const blocks = sections.map((s) => {
    let most = 0;
    for (const r of s.rows) most = Math.max(most, r.seats.length);
    return [ROW_LABEL + most * PITCH, TITLE + s.rows.length * PITCH];
  });
  const place = (c: number) => {
    const at: [number, number][] = [];
    let y = 0;
    let w = 0;
    for (let k = 0; k < blocks.length; k += c) {
      let x = 0;
      let h = 0;
      for (const [bw, bh] of blocks.slice(k, k + c)) {
        at.push([x, y]);
        x += bw + GAP;
        h = Math.max(h, bh);
      }
      w = Math.max(w, x - GAP);
      y += h + GAP;
    }
    return { at, w, h: y - GAP };
  };
  let best = place(1);
  let bestFit = Math.min(aspect / best.w, 1 / best.h);
  for (let c = 2; c <= blocks.length; c++) {
    const p = place(c);
    const fit = Math.min(aspect / p.w, 1 / p.h);
    if (fit > bestFit) {
      best = p;
      bestFit = fit;
    }
  }
  return best.at;
}

// Decks side by side, in their order, a gap apart.
function deckOrigins(sections: SectionIn[], decks: DeckIn[]): [number, number][] {
  const count = Math.max(decks.length, 1, ...sections.map((s) => (s.deck ?? 0) + 1));
  const width = new Array<number>(count).fill(0);
  for (const s of sections) {
    for (const r of s.rows) if (r.x?.length) width[s.deck ?? 0] = Math.max(width[s.deck ?? 0], greatest(r.x) + PITCH);
  }
  const at: [number, number][] = [];
  let x = 0;
  for (let d = 0; d < count; d++) {
    at.push([x, 0]);
    x += Math.max(decks[d]?.width ?? 0, width[d]) + 4 * PITCH;
  }
  return at;
}

/** Where a straight section's title goes (the top of its block), or a
 * positioned one's (above its places). */
export function titleAt(g: Geometry, s: SectionGeom): [number, number] {
  return g.positioned ? [(s.box[0] + s.box[2]) / 2, s.box[1] - 4] : [s.box[0] - ROW_LABEL, s.box[1] - 4];
}

/**
 * A lookup of the place under a point: a grid of buckets of 4×4 pitches,
 * built on the first question.
 */
export class HitGrid {
  private readonly cell = PITCH * 4;
  private readonly cols: number;
  private readonly start: Uint32Array;
  private readonly items: Uint32Array;

  constructor(private readonly g: Geometry) {
    this.cols = Math.max(1, Math.ceil(g.width / this.cell));
    const rows = Math.max(1, Math.ceil(g.height / this.cell));
    const count = new Uint32Array(this.cols * rows + 1);
    const bucket = new Uint32Array(g.n);
    for (let i = 0; i < g.n; i++) {
      const b = this.bucketOf(g.x[i], g.y[i], rows);
      bucket[i] = b;
      count[b + 1]++;
    }
    for (let b = 1; b < count.length; b++) count[b] += count[b - 1];
    this.start = count.slice();
    this.items = new Uint32Array(g.n);
    const fill = count.slice();
    for (let i = 0; i < g.n; i++) this.items[fill[bucket[i]]++] = i;
  }

  private bucketOf(x: number, y: number, rows = Math.ceil(this.g.height / this.cell)): number {
    const c = Math.min(this.cols - 1, Math.max(0, Math.floor(x / this.cell)));
    const r = Math.min(Math.max(rows, 1) - 1, Math.max(0, Math.floor(y / this.cell)));
    return r * this.cols + c;
  }

  /** The place whose pitch square holds the point, or -1. */
  at(x: number, y: number): number {
    const half = PITCH / 2;
    let best = -1;
    let bestD = Infinity;
    for (const dy of [-1, 0, 1]) {
      for (const dx of [-1, 0, 1]) {
        const px = x + dx * this.cell;
        const py = y + dy * this.cell;
        if (px < 0 || py < 0 || px > this.g.width + this.cell || py > this.g.height + this.cell) continue;
        const b = this.bucketOf(px, py);
        for (let k = this.start[b]; k < this.start[b + 1]; k++) {
          const i = this.items[k];
          const ex = Math.abs(this.g.x[i] - x);
          const ey = Math.abs(this.g.y[i] - y);
          if (ex <= half && ey <= half && ex + ey < bestD) {
            best = i;
            bestD = ex + ey;
          }
        }
      }
    }
    return best;
  }
}
