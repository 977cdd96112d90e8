// A venue's seat map drawn whole on a canvas (decision 0403), with zoom and
// pan by touch (pinch, drag), mouse (wheel, drag), keyboard (+ and −,
// arrows) and the buttons above it; a tap or click on a seat drawn large
// enough to hit chooses it, on a smaller one it zooms in there first
// (decision 0405). Loaded with the show page, not the first page (its own
// chunk).
//
// Screen readers and the keyboard keep the grids of before (decision
// 0404): each section an ARIA grid with one tab stop, arrows moving, Home
// and End, Enter or Space choosing, each seat's label saying its number,
// kind, state and price. The grids are virtualised: only the rows in view
// (drawn at least GRID_FROM px) are in the DOM, at most MAX_CELLS cells,
// plus each section's tab stop; the cells lie over the seats they stand
// for, transparent, so the focus ring is drawn around the seat itself.
import { DRAWN, geometry, HitGrid, PITCH } from "./venuelayout.js";
import type { DeckIn, FeatureIn, Geometry, SectionIn } from "./venuelayout.js";
import { CHOSEN_LOOK, KIND_BLOCKED, Painter } from "./venuepaint.js";
import type { Look, View } from "./venuepaint.js";

/** A seat held by this buyer (after the three SeatState values). */
const MINE = 3;

export interface VenueLabels {
  free: string;
  held: string;
  sold: string;
  yours: string;
  selected: string;
  price: (minor: bigint) => string;
  seatNo: (seat: string) => string;
  grid: (section: string) => string;
  /** A section's name in the UI's language. */
  section: (name: string, nameBn: string) => string;
  /** A feature's name in the UI's language. */
  feature: (f: FeatureIn) => string;
  /** What each SeatKind is, in words ("" for an ordinary seat). */
  kinds: string[];
  /** The map's name, which says how to move and zoom it. */
  map: string;
  zoomIn: string;
  zoomOut: string;
  whole: string;
}

export interface VenueOptions {
  decks?: DeckIn[];
  features?: FeatureIn[];
  /** The view to start from (the map drawn again in another language). */
  view?: View;
}

// A tap chooses a seat drawn at least this large (CSS px), a finger's
// target (decision 0309); a mouse's click one at least MOUSE_PX (a pointer
// is precise).
const TAP_PX = 44;
const MOUSE_PX = 16;
// Seats are drawn this size at first at most, and when a tap zooms in to
// choose (a little over TAP_PX, whatever the rounding).
const SEAT_PX = 45;
// Rows in view come into the grids from this size of a seat, at most
// MAX_CELLS cells.
const GRID_FROM = 12;
const MAX_CELLS = 1500;
// The keyboard zooms to seats of this size around the seat it moves to
// when they are drawn smaller than GRID_FROM.
const KEYBOARD_PX = 28;
const ZOOM_STEP = 1.5;
// A pointer that moves less than this is a tap, not a drag.
const SLOP = 6;

function esc(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}

export class VenueMap {
  readonly g: Geometry;
  private readonly states: Uint8Array;
  // The states again, two bits a seat as the availability has them (3:
  // this buyer's), so a refresh compares a byte of four seats at a time.
  private readonly packed: Uint8Array;
  // Free seats that are not blocked (freeCount), kept as states change.
  private free = 0;
  private readonly looks: Uint8Array;
  // How many seats of each row look other than free (the painter stamps
  // a row of free seats whole).
  private readonly marked: Uint32Array;
  // Whether the frame asked for paints the whole map (else it puts the
  // painted image back and writes the text again: the web font came).
  private full = false;
  private chosen = new Set<number>();
  private index?: Map<string, number>;
  private hit?: HitGrid;
  private readonly painter: Painter;
  private readonly stage: HTMLDivElement;
  private readonly box: HTMLDivElement;
  private readonly cells: HTMLDivElement;
  private readonly grids: HTMLDivElement[] = [];
  private readonly current: Int32Array;
  private readonly rowEls = new Map<number, HTMLDivElement>();
  private readonly fullRows = new Set<number>();
  private readonly cellEls = new Map<number, HTMLDivElement>();
  private view: View = { s: 1, tx: 0, ty: 0 };
  private fitS = 1;
  private w = 0;
  private h = 0;
  private frame = 0;
  private gridTimer = 0;
  private readonly resizer: ResizeObserver;
  private readonly pointers = new Map<number, { x: number; y: number }>();
  private gesture?: { x: number; y: number; view: View; moved: boolean; dist: number; mx: number; my: number; pinched: boolean };

  constructor(
    private readonly root: HTMLElement,
    sections: SectionIn[],
    private readonly labels: VenueLabels,
    private readonly onToggle: (seat: string) => void,
    opts: VenueOptions = {},
  ) {
    // The box's width before the map goes in: the page's layout is still
    // the last frame's then, so reading it costs nothing.
    this.w = Math.max(200, Math.round(root.clientWidth || 360));
    root.innerHTML = `<div class="vm-tools">` +
      `<button type="button" class="vm-in" aria-label="${esc(labels.zoomIn)}" title="${esc(labels.zoomIn)}">+</button>` +
      `<button type="button" class="vm-out" aria-label="${esc(labels.zoomOut)}" title="${esc(labels.zoomOut)}">−</button>` +
      `<button type="button" class="vm-whole">${esc(labels.whole)}</button></div>` +
      `<div class="vm-stage"><canvas class="vm-canvas" aria-hidden="true"></canvas>` +
      `<div class="vm-box" tabindex="0" role="group" aria-label="${esc(labels.map)}"></div>` +
      `<div class="vm-cells"></div></div>`;
    this.stage = root.querySelector(".vm-stage")!;
    this.box = root.querySelector(".vm-box")!;
    this.cells = root.querySelector(".vm-cells")!;
    const canvas = root.querySelector<HTMLCanvasElement>(".vm-canvas")!;

    const maxH = Math.round(Math.max(240, Math.min(innerHeight * 0.7, 760)));
    this.g = geometry(sections, this.w / maxH, opts.decks, opts.features);
    const g = this.g;
    this.fitS = Math.min(this.w / g.width, maxH / g.height);
    const first = Math.min(this.fitS, SEAT_PX / DRAWN);
    this.h = Math.round(Math.max(Math.min(g.height * first, maxH), 120));
    this.states = new Uint8Array(g.n);
    this.packed = new Uint8Array((g.n + 3) >> 2);
    this.free = g.n - g.blocked;
    this.looks = new Uint8Array(g.n);
    this.marked = new Uint32Array(g.rowLabel.length);
    this.current = new Int32Array(g.sections.map((s) => s.firstSeat));
    this.stage.style.height = `${this.h}px`;

    const s = this.labels;
    this.painter = new Painter(canvas, g, {
      title: (si) => {
        const sec = g.sections[si];
        return `${s.section(sec.name, sec.nameBn)} · ${s.price(sec.priceMinor)}`;
      },
      feature: (fi) => s.feature(g.features[fi]),
    }, Math.min(devicePixelRatio || 1, 2));
    this.painter.resize(this.w, this.h);
    this.view = opts.view ? { ...opts.view } : { s: first, tx: 0, ty: 0 };
    if (!opts.view) this.centre();
    this.clamp();

    g.sections.forEach((sec) => {
      const grid = document.createElement("div");
      grid.setAttribute("role", "grid");
      grid.className = "vm-grid";
      grid.setAttribute("aria-label", s.grid(s.section(sec.name, sec.nameBn)));
      grid.setAttribute("aria-rowcount", String(sec.rowCount));
      grid.setAttribute("aria-colcount", String(sec.cols));
      this.grids.push(grid);
    });
    this.cells.append(...this.grids);

    this.painter.paintAll(this.view, this.looks, this.marked);
    this.place();
    this.syncGrid();

    root.querySelector(".vm-in")!.addEventListener("click", () => this.zoomAt(this.w / 2, this.h / 2, ZOOM_STEP));
    root.querySelector(".vm-out")!.addEventListener("click", () => this.zoomAt(this.w / 2, this.h / 2, 1 / ZOOM_STEP));
    root.querySelector(".vm-whole")!.addEventListener("click", () => this.whole());
    this.stage.addEventListener("pointerdown", (e) => this.down(e));
    this.stage.addEventListener("pointermove", (e) => this.move(e));
    this.stage.addEventListener("pointerup", (e) => this.up(e));
    this.stage.addEventListener("pointercancel", (e) => {
      this.pointers.delete(e.pointerId);
      if (this.pointers.size === 0) this.gesture = undefined;
    });
    this.stage.addEventListener("wheel", (e) => this.wheel(e), { passive: false });
    this.stage.addEventListener("keydown", (e) => this.key(e));
    this.cells.addEventListener("focusin", (e) => {
      const i = Number((e.target as HTMLElement).dataset?.i ?? -1);
      if (i >= 0) this.keepInView(i);
    });
    this.resizer = new ResizeObserver(() => this.resized());
    this.resizer.observe(root);
    // Text drawn before the web font came is drawn again with it.
    document.fonts?.addEventListener?.("loadingdone", this.fontsCame);
  }

  private readonly fontsCame = () => {
    this.painter.fontsChanged();
    this.paintNext(false);
  };

  // Paints at the next frame: the whole map, or (full false, unless the
  // view changed meanwhile) the image painted last and the text again.
  private paintNext(full: boolean): void {
    this.full ||= full;
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (this.full) this.painter.paintAll(this.view, this.looks, this.marked);
      else this.painter.present(this.view, this.looks);
      this.full = false;
    });
  }

  /** Stops watching the page (the map is drawn again or left). */
  destroy(): void {
    this.resizer.disconnect();
    document.fonts?.removeEventListener?.("loadingdone", this.fontsCame);
    cancelAnimationFrame(this.frame);
    clearTimeout(this.gridTimer);
  }

  /** The view now (to draw the map again where it was). */
  viewState(): View {
    return { ...this.view };
  }

  get seats(): string[] {
    return this.g.seats;
  }

  private seatIndex(seat: string): number | undefined {
    if (!this.index) {
      this.index = new Map();
      this.g.seats.forEach((s, i) => this.index!.set(s, i));
    }
    return this.index.get(seat);
  }

  // ---- the view ----

  private centre(): void {
    const v = this.view;
    v.tx = (this.w - this.g.width * v.s) / 2;
    v.ty = (this.h - this.g.height * v.s) / 2;
  }

  private clamp(): void {
    const v = this.view;
    const min = Math.min(this.fitS, SEAT_PX / DRAWN) * 0.9;
    const max = Math.max(SEAT_PX / DRAWN * 3, min);
    v.s = Math.min(max, Math.max(min, v.s));
    const cw = this.g.width * v.s;
    const ch = this.g.height * v.s;
    v.tx = cw <= this.w ? (this.w - cw) / 2 : Math.min(0, Math.max(this.w - cw, v.tx));
    v.ty = ch <= this.h ? (this.h - ch) / 2 : Math.min(0, Math.max(this.h - ch, v.ty));
  }

  private zoomAt(px: number, py: number, factor: number): void {
    this.zoomTo(this.view.s * factor, px, py);
  }

  // Zooms to scale s keeping the layout point under (px, py) there.
  private zoomTo(s: number, px: number, py: number, lx?: number, ly?: number): void {
    const v = this.view;
    const ax = lx ?? (px - v.tx) / v.s;
    const ay = ly ?? (py - v.ty) / v.s;
    v.s = s;
    v.tx = px - ax * s;
    v.ty = py - ay * s;
    this.changed();
  }

  private whole(): void {
    this.view.s = this.fitS;
    this.centre();
    this.changed();
  }

  /** Zooms to one section (the sections' buttons); from the keyboard,
   * moves the focus to its seat in the tab order too. */
  showSection(si: number, focus: boolean): void {
    const b = this.g.sections[si]?.box;
    if (!b) return;
    const s = Math.min(SEAT_PX / DRAWN, (this.w - 16) / (b[2] - b[0]), (this.h - 16) / (b[3] - b[1]));
    this.zoomTo(s, this.w / 2, this.h / 2, (b[0] + b[2]) / 2, (b[1] + b[3]) / 2);
    if (focus) this.focusSeat(this.current[si], true);
  }

  // The view changed: clamped, painted at the next frame, the grids
  // brought up to date when the view rests.
  private changed(): void {
    this.clamp();
    this.place();
    this.paintNext(true);
    clearTimeout(this.gridTimer);
    this.gridTimer = window.setTimeout(() => this.syncGrid(), 80);
  }

  // The cells' layer follows the view; the view is readable in data-*
  // (the browser tests read it).
  private place(): void {
    const v = this.view;
    this.cells.style.transform = `translate(${v.tx}px, ${v.ty}px) scale(${v.s})`;
    this.cells.style.setProperty("--vm-s", String(v.s));
    this.box.dataset.scale = v.s.toFixed(4);
    this.box.dataset.x = v.tx.toFixed(1);
    this.box.dataset.y = v.ty.toFixed(1);
  }

  private resized(): void {
    const w = Math.round(this.root.clientWidth);
    if (!w || Math.abs(w - this.w) < 2) return;
    const cx = (this.w / 2 - this.view.tx) / this.view.s;
    const cy = (this.h / 2 - this.view.ty) / this.view.s;
    this.w = w;
    this.fitS = Math.min(this.w / this.g.width, this.h / this.g.height);
    this.painter.resize(this.w, this.h);
    this.zoomTo(this.view.s, this.w / 2, this.h / 2, cx, cy);
    this.painter.paintAll(this.view, this.looks, this.marked);
  }

  // Brings a seat the keyboard moved to into view, large enough to see.
  private keepInView(i: number): void {
    const v = this.view;
    const x = this.g.x[i] * v.s + v.tx;
    const y = this.g.y[i] * v.s + v.ty;
    if (DRAWN * v.s < GRID_FROM) {
      this.zoomTo(KEYBOARD_PX / DRAWN, this.w / 2, this.h / 2, this.g.x[i], this.g.y[i]);
      return;
    }
    const m = PITCH * v.s;
    if (x < m || y < m || x > this.w - m || y > this.h - m) this.zoomTo(v.s, this.w / 2, this.h / 2, this.g.x[i], this.g.y[i]);
  }

  // ---- pointers ----

  private point(e: { clientX: number; clientY: number }): { x: number; y: number } {
    const r = this.stage.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  private down(e: PointerEvent): void {
    if (e.pointerType === "mouse" && e.button !== 0) return;
    this.stage.setPointerCapture?.(e.pointerId);
    const p = this.point(e);
    this.pointers.set(e.pointerId, p);
    const pts = [...this.pointers.values()];
    if (pts.length === 1) {
      this.gesture = { x: p.x, y: p.y, view: { ...this.view }, moved: false, dist: 0, mx: p.x, my: p.y, pinched: false };
    } else if (pts.length === 2 && this.gesture) {
      const [a, b] = pts;
      Object.assign(this.gesture, {
        view: { ...this.view }, dist: Math.hypot(a.x - b.x, a.y - b.y) || 1,
        mx: (a.x + b.x) / 2, my: (a.y + b.y) / 2, pinched: true,
      });
    }
  }

  private move(e: PointerEvent): void {
    if (!this.pointers.has(e.pointerId) || !this.gesture) return;
    const p = this.point(e);
    this.pointers.set(e.pointerId, p);
    const gs = this.gesture;
    const pts = [...this.pointers.values()];
    if (pts.length >= 2) {
      const [a, b] = pts;
      const dist = Math.hypot(a.x - b.x, a.y - b.y) || 1;
      const mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2;
      const s = gs.view.s * (dist / gs.dist);
      const lx = (gs.mx - gs.view.tx) / gs.view.s;
      const ly = (gs.my - gs.view.ty) / gs.view.s;
      this.zoomTo(s, mx, my, lx, ly);
      gs.moved = true;
      return;
    }
    const dx = p.x - gs.x, dy = p.y - gs.y;
    if (!gs.moved && Math.hypot(dx, dy) < SLOP) return;
    gs.moved = true;
    this.view.tx = gs.view.tx + dx;
    this.view.ty = gs.view.ty + dy;
    this.changed();
  }

  private up(e: PointerEvent): void {
    if (!this.pointers.delete(e.pointerId)) return;
    const gs = this.gesture;
    if (this.pointers.size > 0) {
      // One finger of a pinch lifted: the other drags on from here.
      const [p] = [...this.pointers.values()];
      if (gs) Object.assign(gs, { x: p.x, y: p.y, view: { ...this.view } });
      return;
    }
    this.gesture = undefined;
    if (gs && !gs.moved && !gs.pinched) this.tap(this.point(e), e.pointerType);
  }

  private tap(p: { x: number; y: number }, pointerType: string): void {
    const v = this.view;
    const lx = (p.x - v.tx) / v.s;
    const ly = (p.y - v.ty) / v.s;
    this.hit ??= new HitGrid(this.g);
    const i = this.hit.at(lx, ly);
    const need = pointerType === "mouse" ? MOUSE_PX : TAP_PX - 0.5;
    if (DRAWN * v.s < need) {
      // Too small to hit for sure: zoom in there first.
      if (i >= 0 || this.inSection(lx, ly)) this.zoomTo(SEAT_PX / DRAWN, p.x, p.y);
      return;
    }
    if (i >= 0) this.activate(i);
  }

  private inSection(x: number, y: number): boolean {
    return this.g.sections.some((s) => x >= s.box[0] - PITCH && x <= s.box[2] + PITCH && y >= s.box[1] - PITCH && y <= s.box[3] + PITCH);
  }

  private wheel(e: WheelEvent): void {
    e.preventDefault();
    const p = this.point(e);
    const dy = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
    this.zoomAt(p.x, p.y, Math.exp(-dy * (e.ctrlKey ? 0.01 : 0.0025)));
  }

  // ---- keyboard ----

  private key(e: KeyboardEvent): void {
    const t = e.target as HTMLElement;
    const onCell = t.dataset?.i !== undefined;
    const i = onCell ? Number(t.dataset.i) : -1;
    const at = (): [number, number] => (i >= 0
      ? [this.g.x[i] * this.view.s + this.view.tx, this.g.y[i] * this.view.s + this.view.ty]
      : [this.w / 2, this.h / 2]);
    if (e.key === "+" || e.key === "=") {
      e.preventDefault();
      this.zoomAt(...at(), ZOOM_STEP);
      return;
    }
    if (e.key === "-" || e.key === "_" || e.key === "−") {
      e.preventDefault();
      this.zoomAt(...at(), 1 / ZOOM_STEP);
      return;
    }
    if (onCell) {
      this.gridKey(e, i);
      return;
    }
    if (t !== this.box) return;
    const step = 0.2;
    const moves: Record<string, [number, number]> = {
      ArrowLeft: [this.w * step, 0], ArrowRight: [-this.w * step, 0], ArrowUp: [0, this.h * step], ArrowDown: [0, -this.h * step],
    };
    if (moves[e.key]) {
      e.preventDefault();
      this.view.tx += moves[e.key][0];
      this.view.ty += moves[e.key][1];
      this.changed();
    } else if (e.key === "0" || e.key === "Home") {
      e.preventDefault();
      this.whole();
    }
  }

  // The grids' keys, as before (seatmap.ts): arrows within the section,
  // Home and End to the row's ends, Enter or Space chooses.
  private gridKey(e: KeyboardEvent, i: number): void {
    const g = this.g;
    const row = g.row[i];
    const col = i - g.rowStart[row];
    const rowLen = (r: number) => g.rowStart[r + 1] - g.rowStart[r];
    const same = (r: number) => r >= 0 && r < g.rowSection.length && g.rowSection[r] === g.section[i];
    let next = -1;
    switch (e.key) {
      case "ArrowRight":
        if (col + 1 < rowLen(row)) next = i + 1;
        break;
      case "ArrowLeft":
        if (col > 0) next = i - 1;
        break;
      case "ArrowDown":
        if (same(row + 1)) next = g.rowStart[row + 1] + Math.min(col, rowLen(row + 1) - 1);
        break;
      case "ArrowUp":
        if (same(row - 1)) next = g.rowStart[row - 1] + Math.min(col, rowLen(row - 1) - 1);
        break;
      case "Home":
        next = g.rowStart[row];
        break;
      case "End":
        next = g.rowStart[row + 1] - 1;
        break;
      case "Enter":
      case " ":
        e.preventDefault();
        this.activate(i);
        return;
      default:
        return;
    }
    e.preventDefault();
    if (next >= 0) this.focusSeat(next, true);
  }

  private activate(i: number): void {
    this.focusSeat(i, false);
    if (this.g.kind[i] === KIND_BLOCKED) return;
    if (this.states[i] === 0 || this.chosen.has(i)) this.onToggle(this.g.seats[i]);
  }

  // Moves its section's tab stop to seat i and the focus with it; the
  // seat's cell is made if its row is not in the DOM.
  private focusSeat(i: number, keep: boolean): void {
    const si = this.g.section[i];
    const old = this.current[si];
    this.current[si] = i;
    const el = this.cellEls.get(i) ?? this.loneCell(i);
    el.tabIndex = 0;
    el.focus({ preventScroll: true });
    if (old !== i) {
      const o = this.cellEls.get(old);
      if (o) {
        o.tabIndex = -1;
        if (!this.fullRows.has(this.g.row[old])) this.dropCell(old);
      }
    }
    if (keep) this.keepInView(i);
  }

  // ---- the grids ----

  private cellHTML(i: number): string {
    const g = this.g;
    const h = DRAWN / 2;
    const tab = this.current[g.section[i]] === i ? 0 : -1;
    return `<div role="gridcell" id="seat-${esc(g.seats[i])}" data-i="${i}" tabindex="${tab}" aria-colindex="${i - g.rowStart[g.row[i]] + 1}" ` +
      `class="${this.cellClass(i)}" aria-selected="${this.chosen.has(i)}" aria-disabled="${this.disabled(i)}" ` +
      `aria-label="${esc(this.label(i))}" style="left:${(g.x[i] - h).toFixed(2)}px;top:${(g.y[i] - h).toFixed(2)}px"></div>`;
  }

  private cellClass(i: number): string {
    const k = this.g.kind[i];
    return `vm-cell seat s${this.states[i]}${this.chosen.has(i) ? " chosen" : ""}${k ? ` k${k}` : ""}`;
  }

  private disabled(i: number): boolean {
    return this.g.kind[i] === KIND_BLOCKED || (this.states[i] !== 0 && !this.chosen.has(i));
  }

  private label(i: number): string {
    const l = this.labels;
    const st = this.states[i];
    const state = this.chosen.has(i) ? l.selected : st === MINE ? l.yours : st === 2 ? l.sold : st === 1 ? l.held : l.free;
    const kind = l.kinds[this.g.kind[i]];
    const price = l.price(this.g.sections[this.g.section[i]].priceMinor);
    return kind ? `${l.seatNo(this.g.seats[i])}, ${state}, ${price}, ${kind}` : `${l.seatNo(this.g.seats[i])}, ${state}, ${price}`;
  }

  private dress(i: number): void {
    const el = this.cellEls.get(i);
    if (!el) return;
    el.className = this.cellClass(i);
    el.setAttribute("aria-selected", String(this.chosen.has(i)));
    el.setAttribute("aria-disabled", String(this.disabled(i)));
    el.setAttribute("aria-label", this.label(i));
  }

  // The row element of row r, made (empty) if missing, in row order.
  private rowEl(r: number): HTMLDivElement {
    let el = this.rowEls.get(r);
    if (el) return el;
    el = document.createElement("div");
    el.setAttribute("role", "row");
    el.setAttribute("aria-rowindex", String(r - this.g.sections[this.g.rowSection[r]].firstRow + 1));
    el.dataset.r = String(r);
    const grid = this.grids[this.g.rowSection[r]];
    let before: Element | null = null;
    for (const c of grid.children) {
      if (Number((c as HTMLElement).dataset.r) > r) {
        before = c;
        break;
      }
    }
    grid.insertBefore(el, before);
    this.rowEls.set(r, el);
    return el;
  }

  private loneCell(i: number): HTMLDivElement {
    const row = this.rowEl(this.g.row[i]);
    const t = document.createElement("template");
    t.innerHTML = this.cellHTML(i);
    const el = t.content.firstElementChild as HTMLDivElement;
    // In seat order among the cells already there.
    let before: Element | null = null;
    for (const c of row.children) {
      if (Number((c as HTMLElement).dataset.i) > i) {
        before = c;
        break;
      }
    }
    row.insertBefore(el, before);
    this.cellEls.set(i, el);
    return el;
  }

  private dropCell(i: number): void {
    const el = this.cellEls.get(i);
    if (!el) return;
    const row = el.parentElement;
    el.remove();
    this.cellEls.delete(i);
    if (row && row.childElementCount === 0) {
      row.remove();
      this.rowEls.delete(this.g.row[i]);
    }
  }

  private fillRow(r: number): void {
    const g = this.g;
    const row = this.rowEl(r);
    const from = g.rowStart[r], to = g.rowStart[r + 1];
    const kept = [...row.children] as HTMLDivElement[];
    const html: string[] = [];
    let k = 0;
    let cut = kept.length ? Number(kept[0].dataset.i) : to;
    const flush = (before: Element | null) => {
      if (!html.length) return;
      const t = document.createElement("template");
      t.innerHTML = html.join("");
      row.insertBefore(t.content, before);
      html.length = 0;
    };
    for (let i = from; i < to; i++) {
      if (i === cut) {
        flush(kept[k]);
        k++;
        cut = k < kept.length ? Number(kept[k].dataset.i) : to;
        continue;
      }
      html.push(this.cellHTML(i));
    }
    flush(null);
    for (const c of row.children) this.cellEls.set(Number((c as HTMLElement).dataset.i), c as HTMLDivElement);
    this.fullRows.add(r);
  }

  // Makes the grids hold the rows in view (and the tab stops): decision
  // 0404.
  private syncGrid(): void {
    const g = this.g;
    const v = this.view;
    const want = new Set<number>();
    if (DRAWN * v.s >= GRID_FROM) {
      const x0 = -v.tx / v.s, y0 = -v.ty / v.s, x1 = (this.w - v.tx) / v.s, y1 = (this.h - v.ty) / v.s;
      const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
      const seen: [number, number][] = [];
      for (let r = 0; r < g.rowLabel.length; r++) {
        const b = r * 4;
        if (g.rowBox[b + 2] < x0 || g.rowBox[b] > x1 || g.rowBox[b + 3] < y0 || g.rowBox[b + 1] > y1) continue;
        seen.push([r, Math.abs((g.rowBox[b + 1] + g.rowBox[b + 3]) / 2 - cy) + Math.abs((g.rowBox[b] + g.rowBox[b + 2]) / 2 - cx) / 4]);
      }
      seen.sort((a, b) => a[1] - b[1]);
      let cells = 0;
      for (const [r] of seen) {
        const n = g.rowStart[r + 1] - g.rowStart[r];
        if (cells + n > MAX_CELLS) break;
        cells += n;
        want.add(r);
      }
    }
    for (const r of [...this.fullRows]) {
      if (want.has(r)) continue;
      this.fullRows.delete(r);
      const stops = new Set(this.current);
      for (let i = g.rowStart[r]; i < g.rowStart[r + 1]; i++) if (!stops.has(i)) this.dropCell(i);
    }
    for (const r of want) if (!this.fullRows.has(r)) this.fillRow(r);
    for (const i of this.current) if (!this.cellEls.has(i)) this.loneCell(i);
  }

  // ---- states ----

  private look(i: number): Look {
    return (this.chosen.has(i) ? CHOSEN_LOOK : this.states[i]) as Look;
  }

  // Paints the seats whose look changed, and their cells.
  private repaint(which: number[]): void {
    const changed: number[] = [];
    for (const i of which) {
      const l = this.look(i);
      const was = this.looks[i];
      if (l !== was) {
        this.looks[i] = l;
        if (!was) this.marked[this.g.row[i]]++;
        else if (!l) this.marked[this.g.row[i]]--;
        changed.push(i);
      }
      this.dress(i);
    }
    if (changed.length > 2000) this.painter.paintAll(this.view, this.looks, this.marked);
    else if (changed.length) this.painter.paintSome(this.view, this.looks, changed);
    this.lastChanged = changed.length;
  }

  /** How many seats the last update painted again. */
  lastChanged = 0;

  /**
   * Sets the seats' states from the availability bits (layout order, from
   * seat offset, count seats); returns the chosen seats now taken.
   */
  setAvailability(bits: Uint8Array, mine: Set<string> = new Set(), offset = 0, count = this.g.n - offset): string[] {
    const taken: string[] = [];
    const touched: number[] = [];
    const end = Math.min(this.g.n, offset + count);
    const seats = this.g.seats;
    const apply = (i: number) => {
      const k = i - offset;
      let st = ((bits[k >> 2] ?? 0) >> ((k & 3) * 2)) & 3;
      if (st !== 0 && mine.size && mine.has(seats[i])) st = MINE;
      if (this.setState(i, st)) {
        if (st !== 0 && st !== MINE && this.chosen.delete(i)) taken.push(seats[i]);
        touched.push(i);
      }
    };
    if (offset % 4 === 0) {
      // A byte at a time: where the four seats' bits are what is drawn,
      // none of them changed (a seat drawn as this buyer's has 3, which
      // the availability never has); the buyer's holds are looked at
      // one by one after.
      const p = this.packed, base = offset >> 2;
      const bytes = (end - offset + 3) >> 2;
      for (let b = 0; b < bytes; b++) {
        if ((bits[b] ?? 0) === p[base + b]) continue;
        for (let i = offset + b * 4, to = Math.min(end, i + 4); i < to; i++) apply(i);
      }
      for (const seat of mine) {
        const i = this.seatIndex(seat);
        if (i !== undefined && i >= offset && i < end) apply(i);
      }
    } else {
      for (let i = offset; i < end; i++) apply(i);
    }
    this.repaint(touched);
    return taken;
  }

  // Sets a seat's state; whether it changed.
  private setState(i: number, st: number): boolean {
    const was = this.states[i];
    if (st === was) return false;
    this.states[i] = st;
    const sh = (i & 3) * 2;
    this.packed[i >> 2] = (this.packed[i >> 2] & ~(3 << sh)) | (st << sh);
    if (this.g.kind[i] !== KIND_BLOCKED) this.free += (st === 0 ? 1 : 0) - (was === 0 ? 1 : 0);
    return true;
  }

  /** Marks seats taken (held by someone else) now, ahead of the next refresh. */
  markTaken(seats: string[]): void {
    const touched: number[] = [];
    for (const s of seats) {
      const i = this.seatIndex(s);
      if (i === undefined) continue;
      this.chosen.delete(i);
      if (this.states[i] === 0) this.setState(i, 1);
      touched.push(i);
    }
    this.repaint(touched);
  }

  /** Marks seats as this buyer's hold, ahead of the next refresh. */
  markMine(seats: string[]): void {
    const touched: number[] = [];
    for (const s of seats) {
      const i = this.seatIndex(s);
      if (i === undefined) continue;
      this.chosen.delete(i);
      this.setState(i, MINE);
      touched.push(i);
    }
    this.repaint(touched);
  }

  setChosen(seats: Iterable<string>): void {
    const next = new Set<number>();
    for (const s of seats) {
      const i = this.seatIndex(s);
      if (i !== undefined) next.add(i);
    }
    const changed = [...this.chosen, ...next].filter((i) => this.chosen.has(i) !== next.has(i));
    this.chosen = next;
    this.repaint(changed);
  }

  /** Whether a seat is drawn as this buyer's hold (the legend says so then). */
  hasMine(): boolean {
    return this.states.includes(MINE);
  }

  /** How many seats are free. */
  freeCount(): number {
    return this.free;
  }

  priceOf(seat: string): bigint {
    const i = this.seatIndex(seat);
    return i === undefined ? 0n : this.g.sections[this.g.section[i]].priceMinor;
  }

  /**
   * The one section in view, whose availability alone a refresh needs
   * (R-12: a huge show is read a section at a time), or -1 when more
   * than one is in view or a seat of keep (the choice, the buyer's holds)
   * lies in another.
   */
  sectionInView(keep: Iterable<string> = []): number {
    const v = this.view;
    const x0 = -v.tx / v.s, y0 = -v.ty / v.s, x1 = (this.w - v.tx) / v.s, y1 = (this.h - v.ty) / v.s;
    let only = -1;
    for (let si = 0; si < this.g.sections.length; si++) {
      const b = this.g.sections[si].box;
      if (b[2] < x0 || b[0] > x1 || b[3] < y0 || b[1] > y1) continue;
      if (only >= 0) return -1;
      only = si;
    }
    for (const seat of keep) {
      const i = this.seatIndex(seat);
      if (i !== undefined && this.g.section[i] !== only) return -1;
    }
    return only;
  }
}
