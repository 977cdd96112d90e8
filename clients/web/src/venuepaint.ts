// Paints a venue's seat map on a 2D canvas (decision 0403). The places are
// copied as small bitmaps ("sprites", one per look and size) into one
// ImageData and put on the canvas at once: on a machine without a GPU that
// is tens of times faster than a fillRect or a path per place (50,000
// places in a few milliseconds). Text (titles, row labels, seat numbers,
// the features' names) is drawn over it with the canvas's own text, only
// where it is large enough to read. A refresh paints only the places whose
// look changed, each into its own square.
import { DRAWN, titleAt } from "./venuelayout.js";
import type { Geometry } from "./venuelayout.js";

/** How a place looks: 0 free, 1 held by others, 2 sold, 3 this buyer's
 * hold (SeatState and MINE), 4 chosen. */
export type Look = 0 | 1 | 2 | 3 | 4;
export const CHOSEN_LOOK: Look = 4;

/** SeatKind values (catalog.v1). */
export const KIND_BUSINESS = 1;
export const KIND_SLEEPER = 2;
export const KIND_WOMEN = 3;
export const KIND_WHEELCHAIR = 4;
export const KIND_BLOCKED = 5;

/** The mark a kind carries when large enough: a label as well as a shape. */
export const KIND_MARK = ["", "B", "S", "♀", "♿", "×"];

/** The view: CSS px per layout unit, and the layout's origin on screen. */
export interface View {
  s: number;
  tx: number;
  ty: number;
}

/** What the painter writes beside the places. */
export interface PaintText {
  title: (section: number) => string;
  feature: (index: number) => string;
}

const BG = "#f1f3f5";
const INK = "#1b1f24";
const MUTED = "#5b636d";
// The looks, as the legend shows them (app.css .key): fill, edge, ink.
const FILL = ["#ffffff", "#fde7b0", "#8a8f98", "#1b4965", "#0b6e4f"];
const EDGE = ["#2d6a4f", "#a86b00", "#40444b", "#0b2233", "#081c15"];
const INK_ON = [INK, INK, "#ffffff", "#ffffff", "#ffffff"];
// Below 4 device px a place is a dot of one colour: the edge's for a free
// place (white would vanish on the background), the fill's otherwise.
const DOT = ["#52b788", "#d99a1e", "#8a8f98", "#1b4965", "#081c15"];
const BLOCKED_FILL = "#40444b";
const FEATURE_FILL = ["#dde1e6", "#c9ced6", "#e9ecef", "#dee2e6", "#e9ecef", "#2b2f36", "#cfe8dc", "#f1f3f5"];

// Seat numbers from this size of a place (CSS px); row labels and
// section titles from these pitches.
const NUMBERS_FROM = 22;
// The band above a straight section for its title, layout units
// (venuelayout.ts TITLE).
const TITLE_BAND = 8;
const ROW_LABELS_FROM = 9;

function abgr(hex: string): number {
  const v = parseInt(hex.slice(1), 16);
  return (0xff000000 | ((v & 0xff) << 16) | (v & 0xff00) | ((v >> 16) & 0xff)) >>> 0;
}

// Straight rows are stamped whole while a place is at most STAMP_MAX
// device px and a stamp at most STAMP_PIXELS (larger places are few in
// view, each copied alone).
const STAMP_MAX = 12;
const STAMP_PIXELS = 1 << 18;

interface Stamp {
  /** The row's first and last x and its places (layout). */
  x0: number;
  x1: number;
  n: number;
  /** Its left edge and width, device px. */
  left: number;
  span: number;
  px: Uint32Array;
}

export class Painter {
  private readonly ctx: CanvasRenderingContext2D;
  private img?: ImageData;
  private u32 = new Uint32Array(0);
  private w = 0;
  private h = 0;
  // This paint's stamps of straight rows (stamp()).
  private readonly stamps: Stamp[] = [];
  // The section titles and their widths, measured once (paintText).
  private readonly titles: { text: string; width: number }[] = [];
  // The sprites of the current size: look * 8 + kind → pixels.
  private sprites = new Map<number, Uint32Array>();
  private spriteSize = 0;
  private scratch?: CanvasRenderingContext2D;
  private readonly bg = abgr(BG);
  // The page's font (app.css; the site's Bengali web font has the taka
  // sign), named here rather than read from the page, which would make the
  // browser lay the page out before the first frame.
  private readonly font = `"Noto Sans Bengali", "Noto Sans", system-ui, sans-serif`;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly g: Geometry,
    private readonly text: PaintText,
    readonly dpr: number,
  ) {
    this.ctx = canvas.getContext("2d", { alpha: false })!;
  }

  /** Sizes the canvas to the box (CSS px). */
  resize(cssW: number, cssH: number): void {
    this.w = Math.max(1, Math.round(cssW * this.dpr));
    this.h = Math.max(1, Math.round(cssH * this.dpr));
    this.canvas.width = this.w;
    this.canvas.height = this.h;
    this.canvas.style.width = `${cssW}px`;
    this.canvas.style.height = `${cssH}px`;
    this.img = this.ctx.createImageData(this.w, this.h);
    this.u32 = new Uint32Array(this.img.data.buffer);
  }

  // The side of a drawn place in device px at scale s.
  private side(s: number): number {
    return Math.max(1, Math.round(DRAWN * s * this.dpr));
  }

  private sprite(look: Look, kind: number, d: number): Uint32Array {
    if (d !== this.spriteSize) {
      this.sprites.clear();
      this.spriteSize = d;
    }
    const key = look * 8 + kind;
    let px = this.sprites.get(key);
    if (!px) {
      px = this.makeSprite(look, kind, d);
      this.sprites.set(key, px);
    }
    return px;
  }

  private makeSprite(look: Look, kind: number, d: number): Uint32Array {
    if (d < 4) {
      const c = abgr(kind === KIND_BLOCKED ? BLOCKED_FILL : DOT[look]);
      return new Uint32Array(d * d).fill(c);
    }
    if (!this.scratch || this.scratch.canvas.width < d) {
      const c = document.createElement("canvas");
      c.width = c.height = Math.max(d, 64);
      this.scratch = c.getContext("2d", { willReadFrequently: true })!;
    }
    const g = this.scratch;
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.fillStyle = BG;
    g.fillRect(0, 0, d, d);
    const lw = Math.max(1, Math.round(d / (look === 4 || look === 3 ? 9 : 14)));
    const inset = lw / 2;
    const blocked = kind === KIND_BLOCKED;
    g.beginPath();
    shape(g, kind, inset, d - 2 * inset);
    g.fillStyle = blocked ? BLOCKED_FILL : FILL[look];
    g.fill();
    if (!blocked && d >= 8) {
      g.save();
      g.clip();
      if (look === 1) {
        // Held: hatched.
        g.strokeStyle = EDGE[1];
        g.lineWidth = Math.max(1, d / 12);
        for (let k = -d; k < d; k += Math.max(3, d / 5)) {
          g.beginPath();
          g.moveTo(k, d);
          g.lineTo(k + d, 0);
          g.stroke();
        }
      } else if (look === 2) {
        // Sold: crossed.
        g.strokeStyle = EDGE[2];
        g.lineWidth = Math.max(1, d / 16);
        g.beginPath();
        g.moveTo(0, 0);
        g.lineTo(d, d);
        g.moveTo(d, 0);
        g.lineTo(0, d);
        g.stroke();
      }
      g.restore();
    }
    g.beginPath();
    shape(g, kind, inset, d - 2 * inset);
    g.strokeStyle = blocked ? "#1b1f24" : EDGE[look];
    g.lineWidth = lw;
    if (look === 1) g.setLineDash([Math.max(2, d / 8), Math.max(1, d / 14)]);
    g.stroke();
    g.setLineDash([]);
    if (kind === KIND_BUSINESS && d >= 8) {
      // Business: a headrest band across the top.
      g.fillStyle = EDGE[look];
      g.fillRect(inset, inset, d - 2 * inset, Math.max(1, d / 6));
    }
    // The kind's mark, or a chosen seat's tick, where there is room and
    // no seat number will be written over it.
    const numbered = d / this.dpr >= NUMBERS_FROM;
    const mark = kind ? KIND_MARK[kind] : look === 4 ? "✓" : "";
    if (mark && d >= 12) {
      g.fillStyle = blocked ? "#ffffff" : INK_ON[look];
      g.textAlign = "center";
      g.textBaseline = "middle";
      if (numbered && kind) {
        g.font = `700 ${Math.round(d * 0.28)}px ${this.font}`;
        g.fillText(mark, d * 0.78, d * 0.24);
      } else if (!numbered) {
        g.font = `700 ${Math.round(d * 0.6)}px ${this.font}`;
        g.fillText(mark, d / 2, d / 2 + 1);
      }
    }
    return new Uint32Array(g.getImageData(0, 0, d, d).data.buffer.slice(0));
  }

  private blit(px: Uint32Array, d: number, left: number, top: number): void {
    let x0 = left, y0 = top, sx = 0, sy = 0, w = d, h = d;
    if (x0 < 0) { sx = -x0; w += x0; x0 = 0; }
    if (y0 < 0) { sy = -y0; h += y0; y0 = 0; }
    if (x0 + w > this.w) w = this.w - x0;
    if (y0 + h > this.h) h = this.h - y0;
    if (w <= 0 || h <= 0) return;
    const u = this.u32;
    for (let r = 0; r < h; r++) {
      const src = (sy + r) * d + sx;
      const dst = (y0 + r) * this.w + x0;
      if (w <= 6) for (let k = 0; k < w; k++) u[dst + k] = px[src + k];
      else u.set(px.subarray(src, src + w), dst);
    }
  }

  private fillRect(x: number, y: number, w: number, h: number, color: number): void {
    const x0 = Math.max(0, Math.round(x)), y0 = Math.max(0, Math.round(y));
    const x1 = Math.min(this.w, Math.round(x + w)), y1 = Math.min(this.h, Math.round(y + h));
    for (let r = y0; r < y1; r++) this.u32.fill(color, r * this.w + x0, r * this.w + x1);
  }

  /** Paints everything: the background, the features, every place in
   * view and the text. looks holds each place's look, marked how many
   * places of each row look other than free. */
  paintAll(v: View, looks: Uint8Array, marked: Uint32Array): void {
    if (!this.img) return;
    const g = this.g;
    const k = this.dpr;
    this.u32.fill(this.bg);
    g.features.forEach((f) => {
      this.fillRect((f.x - f.width / 2) * v.s * k + v.tx * k, (f.y - f.height / 2) * v.s * k + v.ty * k,
        f.width * v.s * k, f.height * v.s * k, abgr(FEATURE_FILL[f.kind] ?? FEATURE_FILL[0]));
    });
    const d = this.side(v.s);
    const sk = v.s * k, ox = v.tx * k - d / 2, oy = v.ty * k - d / 2;
    const W = this.w, H = this.h;
    const xs = g.x, ys = g.y, kinds = g.kind, box = g.rowBox, start = g.rowStart;
    const straight = g.rowStraight, rowKinds = g.rowKinds;
    const rows = g.rowLabel.length;
    this.stamps.length = 0;
    // Row by row, skipping rows out of view. A straight row clear of the
    // features is stamped whole, its free ordinary places at once (a
    // copy a line of pixels, a builtin's), and only its other places one
    // by one; any other row a place at a time.
    for (let r = 0; r < rows; r++) {
      const b = r * 4;
      if (box[b + 2] * sk + ox + d <= 0 || box[b] * sk + ox >= W || box[b + 3] * sk + oy + d <= 0 || box[b + 1] * sk + oy >= H) continue;
      const from = start[r], end = start[r + 1];
      if (straight[r] && d <= STAMP_MAX && this.clearOfFeatures(b)) {
        const st = this.stamp(from, end, sk, ox, d);
        if (st) {
          this.put(st, d, Math.round(ys[from] * sk + oy));
          if (!marked[r] && !rowKinds[r]) continue;
          for (let i = from; i < end; i++) {
            if (looks[i] || kinds[i]) this.place(i, looks[i], kinds[i], d, sk, ox, oy);
          }
          continue;
        }
      }
      for (let i = from; i < end; i++) this.place(i, looks[i], kinds[i], d, sk, ox, oy);
    }
    this.present(v, looks);
  }

  /** Puts the places painted last on the canvas again and writes the
   * text over them (the web font came). */
  present(v: View, looks: Uint8Array): void {
    if (!this.img) return;
    this.ctx.putImageData(this.img, 0, 0);
    this.paintText(v, looks);
  }

  /** Forgets the text's measures (the web font came). */
  fontsChanged(): void {
    this.titles.length = 0;
  }

  // One place into the image, its sprite copied (clipped to the image),
  // a place under 4 device px a solid square written here.
  private place(i: number, look: number, kind: number, d: number, sk: number, ox: number, oy: number): void {
    const left = Math.round(this.g.x[i] * sk + ox);
    const top = Math.round(this.g.y[i] * sk + oy);
    const W = this.w, H = this.h;
    if (left >= W || top >= H || left + d <= 0 || top + d <= 0) return;
    const px = this.sprite(look as Look, kind, d);
    if (d < 4 && left >= 0 && top >= 0 && left + d <= W && top + d <= H) {
      const u = this.u32, dot = px[0];
      for (let y = 0, o = top * W + left; y < d; y++, o += W) {
        for (let x = 0; x < d; x++) u[o + x] = dot;
      }
    } else {
      this.blit(px, d, left, top);
    }
  }

  private clearOfFeatures(b: number): boolean {
    const box = this.g.rowBox;
    for (const f of this.g.features) {
      if (box[b] < f.x + f.width / 2 && box[b + 2] > f.x - f.width / 2 && box[b + 1] < f.y + f.height / 2 && box[b + 3] > f.y - f.height / 2) return false;
    }
    return true;
  }

  // The stamp of a straight row of free ordinary places (from, end) at
  // this paint's scale: the places' pixels and the gaps between them,
  // d lines of span px, made once for the rows whose places lie at the
  // same x (a section's rows) and kept for this paint. Undefined for one
  // too large to be worth it.
  private stamp(from: number, end: number, sk: number, ox: number, d: number): Stamp | undefined {
    const xs = this.g.x;
    const x0 = xs[from], x1 = xs[end - 1], n = end - from;
    for (const st of this.stamps) if (st.x0 === x0 && st.x1 === x1 && st.n === n) return st;
    const left = Math.round(x0 * sk + ox);
    const span = Math.round(x1 * sk + ox) - left + d;
    if (span * d > STAMP_PIXELS) return undefined;
    const px = new Uint32Array(span * d).fill(this.bg);
    const sprite = this.sprite(0, 0, d);
    for (let i = from; i < end; i++) {
      const at = Math.round(xs[i] * sk + ox) - left;
      for (let y = 0; y < d; y++) px.set(sprite.subarray(y * d, y * d + d), y * span + at);
    }
    const st: Stamp = { x0, x1, n, left, span, px };
    if (this.stamps.length > 64) this.stamps.length = 0;
    this.stamps.push(st);
    return st;
  }

  // A stamp into the image, its top line at top, clipped.
  private put(st: Stamp, d: number, top: number): void {
    const W = this.w, H = this.h;
    const cl = Math.max(0, -st.left), cr = Math.min(st.span, W - st.left);
    if (cr <= cl) return;
    for (let y = Math.max(0, -top); y < d && top + y < H; y++) {
      this.u32.set(st.px.subarray(y * st.span + cl, y * st.span + cr), (top + y) * W + st.left + cl);
    }
  }

  /** Paints the places given again (their look changed). */
  paintSome(v: View, looks: Uint8Array, which: Iterable<number>): void {
    if (!this.img) return;
    const g = this.g;
    const k = this.dpr;
    const d = this.side(v.s);
    const numbers = DRAWN * v.s >= NUMBERS_FROM;
    if (numbers) this.numberFont(v);
    for (const i of which) {
      const left = Math.round(g.x[i] * v.s * k + v.tx * k - d / 2);
      const top = Math.round(g.y[i] * v.s * k + v.ty * k - d / 2);
      if (left >= this.w || top >= this.h || left + d <= 0 || top + d <= 0) continue;
      this.blit(this.sprite(looks[i] as Look, g.kind[i], d), d, left, top);
      this.ctx.putImageData(this.img, 0, 0, left, top, d, d);
      if (numbers) this.number(i, v, looks[i] as Look);
    }
  }

  private numberFont(v: View): void {
    const c = this.ctx;
    c.setTransform(1, 0, 0, 1, 0, 0);
    c.textAlign = "center";
    c.textBaseline = "middle";
    c.font = `${Math.round(Math.min(16, DRAWN * v.s * 0.34) * this.dpr)}px ${this.font}`;
  }

  private number(i: number, v: View, look: Look): void {
    const g = this.g;
    const c = this.ctx;
    const label = g.rowLabel[g.row[i]];
    const text = g.seats[i].slice(label.length);
    const x = (g.x[i] * v.s + v.tx) * this.dpr;
    const y = (g.y[i] * v.s + v.ty) * this.dpr;
    c.fillStyle = g.kind[i] === KIND_BLOCKED ? "#ffffff" : INK_ON[look];
    c.fillText(text, x, y + 1);
    if (look === 4) {
      const w = c.measureText(text).width;
      c.fillRect(x - w / 2, y + DRAWN * v.s * this.dpr * 0.2, w, Math.max(1, this.dpr));
    }
  }

  private paintText(v: View, looks: Uint8Array): void {
    const g = this.g;
    const c = this.ctx;
    const k = this.dpr;
    c.setTransform(1, 0, 0, 1, 0, 0);
    c.textBaseline = "middle";
    const pitch = 10 * v.s;
    // Feature names (the stage, a gate) where they fit.
    c.textAlign = "center";
    c.font = `600 ${Math.round(12 * k)}px ${this.font}`;
    g.features.forEach((f, fi) => {
      const name = this.text.feature(fi);
      if (!name) return;
      const w = f.width * v.s;
      if (w < c.measureText(name).width / k + 4) return;
      c.fillStyle = f.kind === 5 ? "#ffffff" : INK;
      c.fillText(name, (f.x * v.s + v.tx) * k, (f.y * v.s + v.ty) * k);
    });
    // Section titles: above the section where its band holds them, else
    // on it, on a light label, where the section is large enough.
    c.font = `700 ${Math.round(13 * k)}px ${this.font}`;
    const banded = TITLE_BAND * v.s >= 16;
    g.sections.forEach((s, si) => {
      const width = (s.box[2] - s.box[0]) * v.s;
      const height = (s.box[3] - s.box[1]) * v.s;
      if (width < 40 || (!banded && height < 20)) return;
      let title = this.titles[si];
      if (!title) {
        const text = this.text.title(si);
        title = this.titles[si] = { text, width: c.measureText(text).width };
      }
      let t = title.text;
      let tw = title.width;
      if (tw / k > width) {
        while (t.length > 1 && c.measureText(t + "…").width / k > width) t = t.slice(0, -1);
        t += "…";
        tw = c.measureText(t).width;
      }
      if (banded) {
        const [tx, ty] = titleAt(g, s);
        c.textAlign = g.positioned ? "center" : "left";
        c.fillStyle = INK;
        c.fillText(t, (tx * v.s + v.tx) * k, (ty * v.s + v.ty) * k - 2 * k);
        return;
      }
      const cx = ((s.box[0] + s.box[2]) / 2 * v.s + v.tx) * k;
      const cy = ((s.box[1] + s.box[3]) / 2 * v.s + v.ty) * k;
      c.fillStyle = "rgba(255,255,255,0.88)";
      c.fillRect(cx - tw / 2 - 4 * k, cy - 10 * k, tw + 8 * k, 20 * k);
      c.textAlign = "center";
      c.fillStyle = INK;
      c.fillText(t, cx, cy + k);
    });
    // Row labels, left of each row.
    if (pitch >= ROW_LABELS_FROM) {
      c.font = `${Math.round(Math.min(12, pitch * 0.6) * k)}px ${this.font}`;
      c.fillStyle = MUTED;
      c.textAlign = "right";
      for (let r = 0; r < g.rowLabel.length; r++) {
        const first = g.rowStart[r];
        const x = (g.x[first] - 5.5) * v.s + v.tx;
        const y = g.y[first] * v.s + v.ty;
        if (y < -pitch || y > this.h / k + pitch || x < -40 || x > this.w / k + 40) continue;
        c.fillText(g.rowLabel[r], x * k, y * k);
      }
    }
    // Seat numbers, of the rows in view.
    if (DRAWN * v.s >= NUMBERS_FROM) {
      this.numberFont(v);
      const margin = DRAWN * v.s;
      const x0 = (-margin - v.tx) / v.s, y0 = (-margin - v.ty) / v.s;
      const x1 = (this.w / k + margin - v.tx) / v.s, y1 = (this.h / k + margin - v.ty) / v.s;
      const box = g.rowBox;
      for (let r = 0; r < g.rowLabel.length; r++) {
        const b = r * 4;
        if (box[b + 2] < x0 || box[b] > x1 || box[b + 3] < y0 || box[b + 1] > y1) continue;
        for (let i = g.rowStart[r]; i < g.rowStart[r + 1]; i++) {
          const x = g.x[i], y = g.y[i];
          if (x < x0 || y < y0 || x > x1 || y > y1) continue;
          this.number(i, v, looks[i] as Look);
        }
      }
    }
  }
}

// A kind's shape in a square at (o, o) of side s: ordinary and business
// seats square, a sleeper a long berth, a place for women round, a
// wheelchair place a diamond, a blocked one square.
function shape(g: CanvasRenderingContext2D, kind: number, o: number, s: number): void {
  const r = Math.max(1, s * 0.16);
  switch (kind) {
    case KIND_SLEEPER:
      roundRect(g, o + s * 0.18, o, s * 0.64, s, r);
      break;
    case KIND_WOMEN:
      g.arc(o + s / 2, o + s / 2, s / 2, 0, Math.PI * 2);
      break;
    case KIND_WHEELCHAIR:
      g.moveTo(o + s / 2, o);
      g.lineTo(o + s, o + s / 2);
      g.lineTo(o + s / 2, o + s);
      g.lineTo(o, o + s / 2);
      g.closePath();
      break;
    default:
      roundRect(g, o, o, s, s, r);
  }
}

// A rounded rectangle's path (CanvasRenderingContext2D.roundRect is newer
// than the browsers the site supports).
function roundRect(g: CanvasRenderingContext2D, x: number, y: number, w: number, h: number, r: number): void {
  g.moveTo(x + r, y);
  g.arcTo(x + w, y, x + w, y + h, r);
  g.arcTo(x + w, y + h, x, y + h, r);
  g.arcTo(x, y + h, x, y, r);
  g.arcTo(x, y, x + w, y, r);
  g.closePath();
}
