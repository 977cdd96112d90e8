// The seat map, drawn as one SVG per section from the layout, and kept up
// to date from the 2-bit availability. It is built as markup in one go
// and updated in place (a 50,000-seat stadium would be too many
// components), outside Preact.
//
// Accessibility: each section is an ARIA grid, each seat a gridcell whose
// label says seat, state and price; one seat per grid is in the tab order
// (roving tabindex), arrow keys move, Home/End go to the row's ends,
// Enter or Space chooses. States differ by pattern and mark as well as
// colour: free seats are plain, held ones hatched, sold ones crossed,
// chosen ones filled with a tick.

/** 0 free, 1 held, 2 sold (SeatState), 3 held by this buyer. */
export type State = 0 | 1 | 2 | 3;
export const MINE: State = 3;

export interface LayoutSection {
  name: string;
  priceMinor: bigint;
  /** x, y: the seats' centres in layout units (a place is 10), when the
   * layout gives them: curved rows are drawn curved (decision 0370). */
  rows: { label: string; seats: string[]; x?: number[]; y?: number[] }[];
}

export interface SeatLabels {
  free: string;
  held: string;
  sold: string;
  yours: string;
  selected: string;
  price: (minor: bigint) => string;
  seatNo: (seat: string) => string;
  grid: (section: string) => string;
}

// Every seat is a 44×44 CSS px square, the size a finger hits (WCAG's
// target size), at any width: a section wider than the screen scrolls
// sideways rather than shrinking its seats (decision 0309).
const SIZE = 44;
const CELL = SIZE + 4;
const ROW_LABEL = 26;

function esc(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}

/** The shared patterns, once per page (url(#sg-held), url(#sg-sold)). */
export const PATTERNS = `<svg width="0" height="0" aria-hidden="true" style="position:absolute"><defs>
<pattern id="sg-held" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fde7b0"/><line x1="0" y1="0" x2="0" y2="6" stroke="#a86b00" stroke-width="2.5"/></pattern>
<pattern id="sg-sold" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="#8a8f98"/><path d="M0 0L8 8M8 0L0 8" stroke="#40444b" stroke-width="1.5"/></pattern>
</defs></svg>`;

export class SeatMapView {
  readonly seats: string[] = [];
  private readonly cells: SVGGElement[] = [];
  private readonly section: number[] = [];
  private readonly prices: bigint[] = [];
  private readonly rowOf: number[] = []; // global row number of each seat
  private readonly rowStart: number[] = []; // first seat index of each row
  private readonly rowSection: number[] = [];
  private states = new Uint8Array(0);
  private chosen = new Set<number>();
  private readonly index = new Map<string, number>();

  constructor(
    private readonly root: HTMLElement,
    private readonly layout: LayoutSection[],
    private readonly labels: SeatLabels,
    private readonly onToggle: (seat: string) => void,
  ) {
    const html: string[] = [];
    let i = 0;
    let row = 0;
    layout.forEach((sec, si) => {
      // Where a seat goes: by its position when the layout gives one (a
      // place, 10 units, is a cell), else in straight rows.
      const placed = sec.rows.every((r) => r.x?.length === r.seats.length && r.y?.length === r.seats.length);
      const xs = placed ? sec.rows.flatMap((r) => r.x!) : [0];
      const ys = placed ? sec.rows.flatMap((r) => r.y!) : [0];
      const lo = (v: number[]) => v.reduce((a, b) => Math.min(a, b));
      const hi = (v: number[]) => v.reduce((a, b) => Math.max(a, b));
      const x0 = lo(xs), y0 = lo(ys);
      const at = (r: LayoutSection["rows"][number], ri: number, ci: number): [number, number] => placed
        ? [ROW_LABEL + Math.round(((r.x![ci] - x0) * CELL) / 10), Math.round(((r.y![ci] - y0) * CELL) / 10)]
        : [ROW_LABEL + ci * CELL, ri * CELL];
      const width = placed ? Math.round(((hi(xs) - x0) * CELL) / 10) + CELL + ROW_LABEL
        : Math.max(...sec.rows.map((r) => r.seats.length)) * CELL + ROW_LABEL;
      const height = placed ? Math.round(((hi(ys) - y0) * CELL) / 10) + CELL : sec.rows.length * CELL;
      html.push(`<section class="sm-section"><h3>${esc(sec.name)} <span class="price">${esc(labels.price(sec.priceMinor))}</span></h3>`,
        `<div class="sm-scroll"><svg class="sm-grid" role="grid" aria-label="${esc(labels.grid(sec.name))}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`);
      sec.rows.forEach((r, ri) => {
        const [lx, ly] = at(r, ri, 0);
        this.rowStart.push(i);
        this.rowSection.push(si);
        html.push(`<g role="row"><text class="sm-row" x="${lx - ROW_LABEL + 2}" y="${ly + SIZE / 2 + 4}" aria-hidden="true">${esc(r.label)}</text>`);
        r.seats.forEach((seat, ci) => {
          const [x, y] = at(r, ri, ci);
          const num = seat.slice(r.label.length);
          html.push(`<g role="gridcell" class="seat s0" data-i="${i}" id="seat-${esc(seat)}" tabindex="-1" aria-selected="false" aria-label="${esc(this.label(seat, 0, false, sec.priceMinor))}" transform="translate(${x},${y})"><rect width="${SIZE}" height="${SIZE}" rx="6"/><text x="${SIZE / 2}" y="${SIZE / 2 + 5}">${esc(num)}</text></g>`);
          this.seats.push(seat);
          this.section.push(si);
          this.prices.push(sec.priceMinor);
          this.rowOf.push(row);
          this.index.set(seat, i);
          i++;
        });
        html.push(`</g>`);
        row++;
      });
      html.push(`</svg></div></section>`);
    });
    this.rowStart.push(i);
    root.innerHTML = html.join("");
    const cells = root.querySelectorAll<SVGGElement>("g[data-i]");
    cells.forEach((c) => this.cells.push(c));
    this.states = new Uint8Array(this.cells.length);
    // One seat of each section in the tab order: its first.
    let first = 0;
    for (const sec of layout) {
      if (this.cells[first]) this.cells[first].setAttribute("tabindex", "0");
      first += sec.rows.reduce((n, r) => n + r.seats.length, 0);
    }
    root.addEventListener("click", (e) => {
      const g = (e.target as Element).closest?.("g[data-i]");
      if (g) this.activate(Number(g.getAttribute("data-i")));
    });
    root.addEventListener("keydown", (e) => this.key(e));
  }

  private label(seat: string, st: number, chosen: boolean, price: bigint): string {
    const l = this.labels;
    const state = chosen ? l.selected : st === MINE ? l.yours : st === 2 ? l.sold : st === 1 ? l.held : l.free;
    return `${l.seatNo(seat)}, ${state}, ${l.price(price)}`;
  }

  private paint(i: number): void {
    const c = this.cells[i];
    const st = this.states[i];
    const chosen = this.chosen.has(i);
    c.setAttribute("class", `seat s${st}${chosen ? " chosen" : ""}`);
    c.setAttribute("aria-selected", String(chosen));
    c.setAttribute("aria-disabled", String(st !== 0 && !chosen));
    c.setAttribute("aria-label", this.label(this.seats[i], st, chosen, this.prices[i]));
  }

  /** How many seats the last setAvailability drew again. */
  lastChanged = 0;

  /** Sets every seat's state from the availability bits (layout order). */
  setAvailability(bits: Uint8Array, mine: Set<string> = new Set()): string[] {
    const takenFromChoice: string[] = [];
    this.lastChanged = 0;
    for (let i = 0; i < this.cells.length; i++) {
      let st = ((bits[i >> 2] ?? 0) >> ((i & 3) * 2)) & 3;
      if (st !== 0 && mine.has(this.seats[i])) st = MINE;
      if (st !== this.states[i]) {
        this.states[i] = st;
        if (st !== 0 && st !== MINE && this.chosen.delete(i)) takenFromChoice.push(this.seats[i]);
        this.paint(i);
        this.lastChanged++;
      }
    }
    return takenFromChoice;
  }

  /** Marks seats taken (held by someone else) now, ahead of the next refresh. */
  markTaken(seats: string[]): void {
    for (const s of seats) {
      const i = this.index.get(s);
      if (i === undefined) continue;
      this.chosen.delete(i);
      if (this.states[i] === 0) this.states[i] = 1;
      this.paint(i);
    }
  }

  /** Marks seats as this buyer's hold, ahead of the next refresh. */
  markMine(seats: string[]): void {
    for (const s of seats) {
      const i = this.index.get(s);
      if (i === undefined) continue;
      this.chosen.delete(i);
      this.states[i] = MINE;
      this.paint(i);
    }
  }

  setChosen(seats: Iterable<string>): void {
    const next = new Set<number>();
    for (const s of seats) {
      const i = this.index.get(s);
      if (i !== undefined) next.add(i);
    }
    const changed = [...this.chosen, ...next].filter((i) => this.chosen.has(i) !== next.has(i));
    this.chosen = next;
    for (const i of changed) this.paint(i);
  }

  /** Whether a seat is drawn as this buyer's hold (the legend says so then). */
  hasMine(): boolean {
    return this.states.includes(MINE);
  }

  /** How many of the drawn seats are free. */
  freeCount(): number {
    let n = 0;
    for (const st of this.states) if (st === 0) n++;
    return n;
  }

  priceOf(seat: string): bigint {
    const i = this.index.get(seat);
    return i === undefined ? 0n : this.prices[i];
  }

  private activate(i: number): void {
    this.focus(i);
    if (this.states[i] === 0 || this.chosen.has(i)) this.onToggle(this.seats[i]);
  }

  private focus(i: number): void {
    const sec = this.section[i];
    for (let j = 0; j < this.cells.length; j++) {
      if (this.section[j] === sec && this.cells[j].getAttribute("tabindex") === "0" && j !== i) {
        this.cells[j].setAttribute("tabindex", "-1");
        break;
      }
    }
    this.cells[i].setAttribute("tabindex", "0");
    this.cells[i].focus();
  }

  private key(e: KeyboardEvent): void {
    const g = (e.target as Element).closest?.("g[data-i]");
    if (!g) return;
    const i = Number(g.getAttribute("data-i"));
    const row = this.rowOf[i];
    const col = i - this.rowStart[row];
    const rowLen = (r: number) => this.rowStart[r + 1] - this.rowStart[r];
    const sameSection = (r: number) => r >= 0 && r < this.rowSection.length && this.rowSection[r] === this.section[i];
    let next = -1;
    switch (e.key) {
      case "ArrowRight":
        if (col + 1 < rowLen(row)) next = i + 1;
        break;
      case "ArrowLeft":
        if (col > 0) next = i - 1;
        break;
      case "ArrowDown":
        if (sameSection(row + 1)) next = this.rowStart[row + 1] + Math.min(col, rowLen(row + 1) - 1);
        break;
      case "ArrowUp":
        if (sameSection(row - 1)) next = this.rowStart[row - 1] + Math.min(col, rowLen(row - 1) - 1);
        break;
      case "Home":
        next = this.rowStart[row];
        break;
      case "End":
        next = this.rowStart[row + 1] - 1;
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
    if (next >= 0) this.focus(next);
  }
}
