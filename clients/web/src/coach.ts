// A coach drawn as it is (decision 0373): one SVG per deck from the
// layout's positions, the front at the top with the driver and the door,
// the aisle between the seat columns, stairs, and tabs for the decks of a
// double-decker. Seat kinds differ by shape, mark and words as well as
// colour: a seat for women is round and marked ♀, a business seat wide
// with arms, a sleeper berth long with a pillow, a wheelchair place ♿, a
// crew or blocked seat crossed out. Venues are seatmap.ts's (or the
// canvas renderer's); the show page picks this one for a layout with a
// driver.
//
// Keyboard and screen readers as on the venue map: each deck's seats are
// an ARIA grid of rows, one seat per deck in the tab order, arrow keys
// move (up and down to the nearest seat of the row in front or behind),
// Home and End go to the row's ends, Enter or Space chooses; each seat's
// label says its number, kind, state and price. The public methods are
// SeatMapView's, so the page drives either.
import type { Deck, GetSeatLayoutResponse, LayoutFeature } from "@seatghor/client";

// The kinds by their numbers (catalog.v1.SeatKind, FeatureKind), not the
// SDK's enums: this chunk loads on its own and shares no code with the
// page's (decision 0373).
const ORDINARY = 0, BUSINESS = 1, SLEEPER = 2, WOMEN = 3, WHEELCHAIR = 4, BLOCKED = 5;
const DRIVER = 1, DOOR = 2, STAIRS = 3;

/** 0 free, 1 held, 2 sold (SeatState), 3 held by this buyer. */
type State = 0 | 1 | 2 | 3;
const MINE = 3;

export interface CoachLabels {
  free: string;
  held: string;
  sold: string;
  yours: string;
  selected: string;
  price: (minor: bigint) => string;
  seatNo: (seat: string) => string;
  grid: (deck: string) => string;
  /** Words of each kind; "" for an ordinary seat. */
  kind: (k: number) => string;
  /** A feature's words when the layout gives none. */
  feature: (k: number) => string;
  front: string;
  aisle: string;
  decks: string;
  deck: (n: number) => string;
  /** A deck's own name, in the UI's language. */
  deckName: (d: Deck) => string;
  featureLabel: (f: LayoutFeature) => string;
}

/** Pixels per layout unit: a place (10 units) is a 44 px target. */
const S = 4.4;
const M = 22; // margin around the coach's body
const PITCH = 10;

function esc(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}

/** The glyph marking a kind (besides its shape and colour). */
const MARK: Record<number, string> = {
  [WOMEN]: "♀",
  [WHEELCHAIR]: "♿",
  [BLOCKED]: "✕",
  [BUSINESS]: "B",
};

/** A seat's body and decorations, centred on 0,0 (px): the seat faces the
 * front (up), its back at the bottom. An unpainted square of at least 44 px (two for a
 * berth) is its tap target (decision 0309), whatever its shape. */
function seatShape(k: number, seat: string, berth: boolean): string {
  const mark = MARK[k] ? `<text class="mark" x="13" y="${berth ? -24 : -8}">${MARK[k]}</text>` : "";
  const label = `<path class="hit" d="${berth ? "M-23,-44h46v88h-46z" : "M-23,-23h46v46h-46z"}"/><text y="5">${esc(seat)}</text>`;
  if (berth) {
    // A berth two places long, the pillow at the front (one for women is
    // marked ♀ and coloured as a seat for women).
    return `<path class="body" d="M-20,-42h40v84h-40z"/><path class="back" d="M-14,-36h28v9h-28z"/>${mark}${label}`;
  }
  switch (k) {
    case WOMEN:
      return `<path class="body" d="M-20,0a20,20 0 1,1 40,0a20,20 0 1,1 -40,0z"/>${mark}${label}`;
    case BUSINESS: // wide, with arms
      return `<path class="body" d="M-21,-20h42v40h-42z"/><path class="back" d="M-21,-12h4v26h-4zM17,-12h4v26h-4zM-21,14h42v6h-42z"/>${mark}${label}`;
    case BLOCKED:
      return `<path class="body" d="M-20,-20h40v40h-40z"/><path class="cross" d="M-20,-20L20,20M20,-20L-20,20"/>${label}`;
    default:
      return `<path class="body" d="M-20,-20h40v40h-40z"/><path class="back" d="M-20,14h40v6h-40z"/>${mark}${label}`;
  }
}

export class CoachView {
  readonly seats: string[] = [];
  private readonly cells: SVGGElement[] = [];
  private readonly prices: bigint[] = [];
  private readonly kinds: number[] = [];
  private readonly deckOf: number[] = [];
  /** Each row's seat indexes, left to right; rowOf: a seat's row. */
  private readonly rows: number[][] = [];
  private readonly rowOf: number[] = [];
  private readonly xs: number[] = [];
  private readonly ys: number[] = [];
  private readonly index = new Map<string, number>();
  private states = new Uint8Array(0);
  private chosen = new Set<number>();

  constructor(
    private readonly root: HTMLElement,
    layout: GetSeatLayoutResponse,
    private readonly labels: CoachLabels,
    private readonly onToggle: (seat: string) => void,
  ) {
    const decks = layout.decks.length ? layout.decks : [{ name: "", nameBn: "", width: 0, height: 0 } as Deck];
    const perDeck: string[][] = decks.map(() => []);
    for (const sec of layout.sections) {
      const d = Math.min(sec.deck, decks.length - 1);
      // A section of berths: its seats for women or the crew are berths too.
      const berths = sec.rows.some((r) => r.kinds.some((k) => k === SLEEPER));
      for (const r of sec.rows) {
        const row: number[] = [];
        perDeck[d].push(`<g role="row">`);
        r.seats.forEach((seat, j) => {
          const i = this.seats.length;
          const k: number = r.kinds[j] ?? ORDINARY;
          const x = (r.x[j] ?? j * PITCH + PITCH / 2) * S + M;
          const y = (r.y[j] ?? this.rows.length * PITCH + PITCH / 2) * S + M;
          this.seats.push(seat);
          this.prices.push(sec.priceMinor);
          this.kinds.push(k);
          this.deckOf.push(d);
          this.rowOf.push(this.rows.length);
          this.xs.push(x);
          this.ys.push(y);
          this.index.set(seat, i);
          row.push(i);
          perDeck[d].push(`<g role="gridcell" class="seat cs k${k} s0" data-i="${i}" id="seat-${esc(seat)}" tabindex="-1" aria-selected="false" aria-label="${esc(this.label(i, 0, false))}" transform="translate(${x},${y})">${seatShape(k, seat, berths && k !== WHEELCHAIR)}</g>`);
        });
        row.sort((a, b) => this.xs[a] - this.xs[b]);
        this.rows.push(row);
        perDeck[d].push(`</g>`);
      }
    }
    const l = labels;
    const html: string[] = [];
    if (decks.length > 1) {
      html.push(`<div class="deck-tabs" role="tablist" aria-label="${esc(l.decks)}">`);
      decks.forEach((d, n) =>
        html.push(`<button type="button" role="tab" id="deck-tab-${n}" aria-controls="deck-${n}" aria-selected="${n === 0}" tabindex="${n === 0 ? 0 : -1}">${esc(l.deckName(d) || l.deck(n + 1))}</button>`));
      html.push(`</div>`);
    }
    decks.forEach((d, n) => {
      const name = l.deckName(d) || l.deck(n + 1);
      const w = d.width * S + 2 * M;
      const h = d.height * S + 2 * M;
      const feats = layout.features.filter((f) => f.deck === n).map((f) => this.feature(f)).join("");
      html.push(`<div class="deck" id="deck-${n}"${decks.length > 1 ? ` role="tabpanel" aria-labelledby="deck-tab-${n}"` : ""}${n > 0 ? " hidden" : ""}>`,
        `<div class="sm-scroll"><svg class="coach" width="${w}" height="${h + 18}" viewBox="0 -18 ${w} ${h + 18}" role="group" aria-label="${esc(name)}">`,
        `<text class="front" x="${w / 2}" y="-4">▲ ${esc(l.front)}</text>`,
        `<rect class="hull" x="4" y="4" width="${w - 8}" height="${h - 8}" rx="18"/><path class="glass" d="M18,5H${w - 18}"/>`,
        this.aisle(n), feats,
        `<g role="grid" aria-label="${esc(l.grid(name))}">${perDeck[n].join("")}</g></svg></div></div>`);
    });
    root.innerHTML = html.join("");
    root.querySelectorAll<SVGGElement>("g[data-i]").forEach((c) => (this.cells[Number(c.getAttribute("data-i"))] = c));
    this.states = new Uint8Array(this.cells.length);
    decks.forEach((_, n) => {
      const first = this.deckOf.indexOf(n);
      if (first >= 0) this.cells[first].setAttribute("tabindex", "0");
    });
    root.addEventListener("click", (e) => {
      const t = e.target as Element;
      const tab = t.closest?.("[role=tab]");
      if (tab) return this.showDeck(Number(tab.id.slice(9)), false);
      const g = t.closest?.("g[data-i]");
      if (g) this.activate(Number(g.getAttribute("data-i")));
    });
    root.addEventListener("keydown", (e) => this.key(e));
  }

  /** The aisle: the widest gap between the deck's seat columns, along
   * its rows. */
  private aisle(deck: number): string {
    const on = (v: number[]) => v.filter((_, i) => this.deckOf[i] === deck);
    const xs = [...new Set(on(this.xs))].sort((a, b) => a - b);
    let at = -1;
    let gap = PITCH * S * 1.5;
    for (let i = 1; i < xs.length; i++) {
      if (xs[i] - xs[i - 1] > gap) {
        gap = xs[i] - xs[i - 1];
        at = (xs[i] + xs[i - 1]) / 2;
      }
    }
    if (at < 0) return "";
    const top = Math.min(...on(this.ys)) - 20;
    const len = Math.max(...on(this.ys)) + 20 - top;
    return `<g id="aisle-${deck}" class="aisle" role="img" aria-label="${esc(this.labels.aisle)}"><rect x="${at - 8}" y="${top}" width="16" height="${len}" rx="8"/>` +
      `<text transform="translate(${at + 4},${top + len / 2}) rotate(-90)" aria-hidden="true">${esc(this.labels.aisle)}</text></g>`;
  }

  private feature(f: LayoutFeature): string {
    const x = f.x * S + M;
    const y = f.y * S + M;
    const w = Math.max(f.width, 4) * S;
    const h = Math.max(f.height, 4) * S;
    const words = this.labels.featureLabel(f) || this.labels.feature(f.kind);
    const name = ({ [DRIVER]: "driver", [DOOR]: "door", [STAIRS]: "stairs" } as Record<number, string>)[f.kind] ?? "feature";
    const wheel = f.kind === DRIVER ? `<circle cx="${x}" cy="${y - 4}" r="${Math.min(w, h) / 3}"/>` : "";
    return `<g class="ft ${name}" id="${name}-${f.deck}" role="img" aria-label="${esc(words)}"><rect x="${x - w / 2}" y="${y - h / 2}" width="${w}" height="${h}" rx="4"/>${wheel}` +
      `<text x="${x}" y="${y + h / 2 + 12}" aria-hidden="true">${esc(words)}</text></g>`;
  }

  /** Shows deck n (the tabs of a double-decker); focus: its tab. */
  private showDeck(n: number, focus: boolean): void {
    this.root.querySelectorAll<HTMLElement>(".deck").forEach((d) => (d.hidden = d.id !== `deck-${n}`));
    this.root.querySelectorAll<HTMLElement>("[role=tab]").forEach((t) => {
      const on = t.id === `deck-tab-${n}`;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      if (on && focus) t.focus();
    });
  }

  private label(i: number, st: number, chosen: boolean): string {
    const l = this.labels;
    const state = chosen ? l.selected : st === MINE ? l.yours : st === 2 ? l.sold : st === 1 ? l.held : l.free;
    const kind = l.kind(this.kinds[i]);
    return [l.seatNo(this.seats[i]), kind, state, this.kinds[i] === BLOCKED ? "" : l.price(this.prices[i])]
      .filter(Boolean).join(", ");
  }

  private paint(i: number): void {
    const c = this.cells[i];
    const st = this.states[i];
    const chosen = this.chosen.has(i);
    c.setAttribute("class", `seat cs k${this.kinds[i]} s${st}${chosen ? " chosen" : ""}`);
    c.setAttribute("aria-selected", String(chosen));
    c.setAttribute("aria-disabled", String(st !== 0 && !chosen));
    c.setAttribute("aria-label", this.label(i, st, chosen));
  }

  /** How many seats the last setAvailability painted again. */
  lastChanged = 0;

  /** Sets every seat's state from the availability bits (layout order). */
  setAvailability(bits: Uint8Array, mine: Set<string> = new Set()): string[] {
    const lost: string[] = [];
    this.lastChanged = 0;
    for (let i = 0; i < this.cells.length; i++) {
      let st = ((bits[i >> 2] ?? 0) >> ((i & 3) * 2)) & 3;
      if (st !== 0 && mine.has(this.seats[i])) st = MINE;
      if (st !== this.states[i]) {
        this.states[i] = st;
        this.lastChanged++;
        if (st !== 0 && st !== MINE && this.chosen.delete(i)) lost.push(this.seats[i]);
        this.paint(i);
      }
    }
    return lost;
  }

  /** Marks seats taken (held by someone else) now, ahead of the next refresh. */
  markTaken(seats: string[]): void {
    this.mark(seats, (i) => (this.states[i] === 0 ? 1 : this.states[i]) as State);
  }

  /** Marks seats as this buyer's hold, ahead of the next refresh. */
  markMine(seats: string[]): void {
    this.mark(seats, () => MINE);
  }

  private mark(seats: string[], to: (i: number) => State): void {
    for (const s of seats) {
      const i = this.index.get(s);
      if (i === undefined) continue;
      this.chosen.delete(i);
      this.states[i] = to(i);
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

  hasMine(): boolean {
    return this.states.includes(MINE);
  }

  freeCount(): number {
    return this.states.filter((st, i) => st === 0 && this.kinds[i] !== BLOCKED).length;
  }

  priceOf(seat: string): bigint {
    const i = this.index.get(seat);
    return i === undefined ? 0n : this.prices[i];
  }

  kindOf(seat: string): number {
    const i = this.index.get(seat);
    return i === undefined ? ORDINARY : this.kinds[i];
  }

  private activate(i: number): void {
    this.focus(i);
    if ((this.states[i] === 0 && this.kinds[i] !== BLOCKED) || this.chosen.has(i)) this.onToggle(this.seats[i]);
  }

  private focus(i: number): void {
    const d = this.deckOf[i];
    this.cells.forEach((c, j) => {
      if (j !== i && this.deckOf[j] === d) c.setAttribute("tabindex", "-1");
    });
    this.cells[i].setAttribute("tabindex", "0");
    this.cells[i].focus();
  }

  private key(e: KeyboardEvent): void {
    const t = e.target as Element;
    const tab = t.closest?.("[role=tab]");
    if (tab && (e.key === "ArrowRight" || e.key === "ArrowLeft")) {
      const tabs = this.root.querySelectorAll("[role=tab]").length;
      const n = Number(tab.id.slice(9));
      e.preventDefault();
      return this.showDeck((n + (e.key === "ArrowRight" ? 1 : tabs - 1)) % tabs, true);
    }
    const g = t.closest?.("g[data-i]");
    if (!g) return;
    const i = Number(g.getAttribute("data-i"));
    const r = this.rowOf[i];
    const row = this.rows[r];
    const at = row.indexOf(i);
    // The nearest seat across of the row in front or behind, same deck.
    const across = (step: number): number => {
      for (let k = r + step; k >= 0 && k < this.rows.length; k += step) {
        const other = this.rows[k];
        if (this.deckOf[other[0]] !== this.deckOf[i]) continue;
        return other.reduce((best, j) => (Math.abs(this.xs[j] - this.xs[i]) < Math.abs(this.xs[best] - this.xs[i]) ? j : best));
      }
      return -1;
    };
    let next = -1;
    switch (e.key) {
      case "ArrowRight":
        next = row[at + 1] ?? -1;
        break;
      case "ArrowLeft":
        next = row[at - 1] ?? -1;
        break;
      case "ArrowDown":
        next = across(1);
        break;
      case "ArrowUp":
        next = across(-1);
        break;
      case "Home":
        next = row[0];
        break;
      case "End":
        next = row[row.length - 1];
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
