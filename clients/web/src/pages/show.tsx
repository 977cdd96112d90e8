// A show: its seat map (or general-admission areas), the buyer's choice,
// the hold with its countdown, and on to the order. The map is refreshed
// every few seconds with the availability only (the layout is sent once:
// GetSeatMap with the layout's ETag answers with the 2-bit states alone).
// A seat someone else takes, seen by a refresh or by a refused hold
// (SeatsUnavailable), turns taken and leaves the choice; the rest stays.
// What the message says of it is worked out from the choice as it is
// drawn, so it never contradicts the panel, and a seat that turned out to
// be in the buyer's own hold (made in another tab) is said to be theirs,
// not someone else's (decision 0310).
// The buyer's live holds of the show (ListMyHolds) are theirs again after
// a reload, in another tab or later: drawn as "your hold", with their
// countdown and the way on to the order (decision 0301).
// A bus trip's map is the coach's as it is when its layout has a driver
// (coach.ts, its own chunk; decision 0373), else the SVG seat map
// (seatmap.ts); a venue's is drawn whole on a canvas (venuemap.ts, its own
// chunk, fetched with the show; decision 0403).
// A trip with stops is read for the buyer's journey (?from=…&to=…, as the
// search links it; issue 24): the map's availability and prices are that
// journey's, the buyer picks the boarding and dropping counters, and the
// hold names the journey. Without from and to, the whole trip.
// An order made here asks for its contact first (a bus trip's passengers
// page asks for it there): a guest's mobile number, which the tickets go
// to (decision 0437); anyone's e-mail, a buyer's number (decision 0472).
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { AccountSeatCapSchema, ConnectError, FeatureKind, HoldStatus, InvalidRequestError, QueueTokenError, SeatKind, SeatsUnavailableError, ShowKind, ShowStatus, withQueueToken } from "@seatghor/client";
import type { AccountSeatCap, Counter, GetSeatLayoutResponse, Hold, Show, seatmap } from "@seatghor/client";
import { ErrorNote, NeedsNetwork, Link, NeedSession, useApp } from "../app.js";
import { isGuest } from "../session.js";
import { CONTACT_EMAIL, CONTACT_PHONE, Contact, checkoutContact, contactProblems } from "./passengers.js";
import type { Typed } from "./passengers.js";
import { clock, digits, mmss, operatorName, taka, tsDate, showTime, route, sectionName, showName } from "../i18n.js";
import type { Strings } from "../i18n.js";
import { SeatMapView } from "../seatmap.js";
import type { VenueMap } from "../venuemap.js";

const REFRESH_MS = 2000;
// From this many seats a bus trip's SVG map is drawn a section at a time
// (decision 0161); a venue's canvas draws any size whole (decision 0403),
// a coach (a driver's, coach.ts) is never that large.
const SECTION_AT_A_TIME = 2000;

// The venue renderer, loaded when a show that is not a bus trip opens.
const venueChunk = () => import("../venuemap.js");
// The coach's renderer, loaded when a bus trip's layout is a coach's.
const coachChunk = () => import("../coach.js");

/** Whether a layout is a coach's, drawn as it is (coach.ts, decision
 * 0373): it has a driver. The coach's code loads only then. */
function isCoach(l: GetSeatLayoutResponse): boolean {
  return l.features.some((f) => f.kind === FeatureKind.DRIVER);
}

/** What the page asks of a seat map: the coach's, the SVG one or the venue's. */
interface MapView {
  setAvailability(bits: Uint8Array, mine?: Set<string>, offset?: number, count?: number): string[];
  markTaken(seats: string[]): void;
  markMine(seats: string[]): void;
  setChosen(seats: Iterable<string>): void;
  hasMine(): boolean;
  freeCount(): number;
  priceOf(seat: string): bigint;
  /** How many seats the last update painted again. */
  lastChanged: number;
  destroy?(): void;
}

// The next frame: a refresh's changes are painted at its start, so
// "seatmap-refresh" measures the work and that frame's rendering, not the
// wait for it.
const nextFrame = () => new Promise<void>((resolve) => requestAnimationFrame(() => resolve()));

export function queueTokenKey(showId: bigint): string {
  return `seatghor.qt.${showId}`;
}

export function ShowPage(props: { showId: bigint; search?: string }) {
  const q = new URLSearchParams(props.search);
  return (
    <>
      <NeedsNetwork />
      <NeedSession guest>
        <ShowInner showId={props.showId} from={q.get("from") ?? ""} to={q.get("to") ?? ""} />
      </NeedSession>
    </>
  );
}

function ShowInner({ showId, from, to }: { showId: bigint; from: string; to: string }) {
  const { t, api, lang, go, session } = useApp();
  const guest = isGuest(session);
  // The contact of an order made here, and what to say of its fields.
  const [contact, setContact] = useState<Typed>({ phone: "", email: "" });
  const [contactBad, setContactBad] = useState<Record<string, string>>({});
  const [show, setShow] = useState<Show>();
  const [layout, setLayout] = useState<GetSeatLayoutResponse>();
  const [ga, setGa] = useState<seatmap.GaArea[]>([]);
  const [chosen, setChosen] = useState<string[]>([]);
  // The buyer's live holds of the show, soonest expiry first.
  const [holds, setHolds] = useState<Hold[]>([]);
  const [cap, setCap] = useState<AccountSeatCap>();
  const [msg, setMsg] = useState("");
  // Seats that left the choice: taken by someone else, or found in the
  // buyer's own holds; said by conflictText until the choice changes.
  const [gone, setGone] = useState<{ taken: string[]; own: string[] }>();
  const [err, setErr] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [now, setNow] = useState(Date.now());
  const [qty, setQty] = useState<Record<string, number>>({});
  const [section, setSection] = useState(""); // "": every section
  const [soldOut, setSoldOut] = useState(false);
  // A seat drawn as the buyer's hold: until the next refresh that is so
  // of a hold just released or expired too, and the legend says what it is.
  const [mineDrawn, setMineDrawn] = useState(false);
  const prices = useRef(new Map<string, bigint>());
  const mapEl = useRef<HTMLDivElement>(null);
  const view = useRef<MapView>();
  const venue = useRef<VenueMap>();
  // The venue map's view, kept when it is drawn again (another language).
  const venueView = useRef<ReturnType<VenueMap["viewState"]>>();
  // Seats for women chosen whose passenger the buyer declared a woman
  // (decision 0371): the hold names them, and the page holds no seat for
  // women without.
  const [declared, setDeclared] = useState<string[]>([]);
  // The journey's boarding and dropping counters ("": the first).
  const [board, setBoard] = useState("");
  const [drop, setDrop] = useState("");
  const mine = useRef(new Set<string>());
  const chosenRef = useRef<string[]>([]);
  chosenRef.current = chosen;

  const queueToken = sessionStorage.getItem(queueTokenKey(showId)) ?? "";

  // Seats that left the choice (taken seen by a refresh, or a refused
  // hold): the buyer's holds read again first, so a seat held in another
  // tab is drawn and said as theirs.
  async function seatsGone(seats: string[]) {
    const now = await api.holds.listMyHolds({ showId }).then((r) => r.holds, () => undefined);
    if (now) keepHolds(now);
    const own = new Set(now?.flatMap((h) => h.seats) ?? []);
    const taken = seats.filter((s) => !own.has(s));
    view.current?.markTaken(taken);
    setChosen((cur) => cur.filter((s) => !seats.includes(s)));
    setMsg("");
    setGone({ taken, own: seats.filter((s) => own.has(s)) });
  }

  function conflictText(g: { taken: string[]; own: string[] }): string {
    const rest = chosen.length > 0;
    const taken = g.taken.join(", ");
    const parts = [];
    if (g.taken.length === 1) parts.push(rest ? t.taken(taken) : t.takenNoneLeft(taken));
    else if (g.taken.length > 1) parts.push(t.takenMany(taken, rest));
    if (g.own.length > 0) parts.push(t.alreadyYours(g.own.join(", ")));
    return parts.join(" ");
  }

  function keepHolds(list: Hold[]) {
    mine.current = new Set(list.flatMap((h) => h.seats));
    view.current?.markMine([...mine.current]);
    setMineDrawn(!!view.current?.hasMine());
    setHolds(list);
    setNow(Date.now());
  }

  // The show, its layout and the buyer's live holds, once; the holds
  // before the map is first drawn, so their seats are never shown as
  // someone else's.
  useEffect(() => {
    venueView.current = undefined;
    Promise.all([
      api.catalog.getShow({ showId }),
      api.seatMap.getSeatLayout({ showId, fromStopId: from, toStopId: to }),
      api.holds.listMyHolds({ showId }),
    ])
      .then(([s, l, mh]) => {
        if (s.show?.waitingRoom?.enabled && !queueToken && mh.holds.length === 0) {
          go(`/wait/${showId}`, true);
          return;
        }
        // The venue's or the coach's renderer on its way while the rest
        // comes (a failure is said when the map is drawn).
        if (s.show?.kind !== ShowKind.BUS_TRIP) venueChunk().catch(() => undefined);
        else if (isCoach(l)) coachChunk().catch(() => undefined);
        keepHolds(mh.holds);
        setShow(s.show);
        // GA areas come with the first refresh: the layout has their
        // capacity, not what is left.
        setLayout(l);
        if (s.show?.kind === ShowKind.BUS_TRIP && !isCoach(l) && l.seatCount > SECTION_AT_A_TIME && l.sections[0]) setSection(l.sections[0].name);
      })
      .catch(setErr);
  }, [showId, from, to]);

  // The map, drawn again when the language changes (its labels), and its
  // refresh (a general-admission show has no map, only the refresh).
  useEffect(() => {
    if (!layout || !show) return;
    let v: MapView | undefined;
    let vm: VenueMap | undefined;
    let stopped = false;
    let timer = 0;
    const labels = {
      free: t.free, held: t.held, sold: t.sold, yours: t.yours, selected: t.selected,
      price: (m: bigint) => taka(m, lang),
      seatNo: (s: string) => `${t.seat} ${s}`,
      grid: t.seatsOf,
    };
    const toggle = (seat: string) => {
      prices.current.set(seat, v?.priceOf(seat) ?? 0n);
      setGone(undefined);
      setChosen((cur) => (cur.includes(seat) ? cur.filter((s) => s !== seat) : [...cur, seat]));
    };
    // "seatmap-draw": building the map and the browser's first frame of
    // it (the benchmark in bench_test.go reads it).
    const measured = <T extends MapView>(build: () => T): T => {
      performance.clearMarks("seatmap-start");
      performance.clearMeasures("seatmap-draw");
      performance.mark("seatmap-start");
      const made = build();
      requestAnimationFrame(() => setTimeout(() => performance.measure("seatmap-draw", "seatmap-start")));
      made.setChosen(chosenRef.current);
      return made;
    };
    const refresh = async () => {
      if (stopped || document.hidden) return;
      try {
        // A venue zoomed into one section reads that section only.
        const one = vm ? vm.sectionInView([...chosenRef.current, ...mine.current]) : -1;
        const part = vm ? (one >= 0 ? layout.sections[one].name : "") : section;
        const m = await api.seatMap.getSeatMap({ showId, layoutEtag: layout.etag, section: part, fromStopId: from, toStopId: to });
        if (stopped) return;
        if (m.gaAreas.length) setGa(m.gaAreas);
        let lost: string[] = [];
        if (v) {
          await nextFrame();
          if (stopped) return;
          const start = performance.now();
          lost = vm ? vm.setAvailability(m.availability, mine.current, m.availabilityOffset, m.availabilityCount)
            : v.setAvailability(m.availability, mine.current);
          const changed = v.lastChanged;
          // "seatmap-refresh": a refresh that changed the map, its painting
          // and the frame it is in (bench_test.go).
          if (changed > 0) {
            if (performance.getEntriesByName("seatmap-refresh").length > 100) performance.clearMeasures("seatmap-refresh");
            setTimeout(() => performance.measure("seatmap-refresh", { start, end: performance.now(), detail: { changed } }));
          }
        }
        // Every seat of the show taken (a map of all its sections).
        setSoldOut(!!v && !part && v.freeCount() === 0);
        setMineDrawn(!!v?.hasMine());
        if (lost.length) await seatsGone(lost);
      } catch {
        // the next refresh tries again
      }
    };
    const run = (made: MapView | undefined) => {
      v = made;
      view.current = made;
      void refresh();
      timer = window.setInterval(refresh, REFRESH_MS);
    };
    if (show.kind !== ShowKind.BUS_TRIP && layout.sections.length > 0) {
      venueChunk().then((mod) => {
        if (stopped || !mapEl.current) return;
        const el = mapEl.current;
        vm = measured(() => new mod.VenueMap(el, layout.sections, {
          ...labels,
          section: (name, nameBn) => (lang === "bn" && nameBn) || sectionName(name, show, lang),
          feature: (f) => (lang === "bn" && f.labelBn) || f.label,
          kinds: KINDS.map((k) => kindWords(t, k)),
          map: t.mapHelp, zoomIn: t.zoomIn, zoomOut: t.zoomOut, whole: t.wholeMap,
        }, toggle, { decks: layout.decks, features: layout.features, view: venueView.current }));
        venue.current = vm;
        run(vm);
      }, setErr);
    } else if (isCoach(layout) && layout.sections.length > 0) {
      // A coach as it is (decision 0373).
      coachChunk().then((mod) => {
        if (stopped || !mapEl.current) return;
        const el = mapEl.current;
        run(measured(() => new mod.CoachView(el, layout, {
          ...labels, front: t.front, aisle: t.aisle, decks: t.decks,
          deck: (n) => t.deck(digits(n, lang)),
          deckName: (d) => (lang === "bn" && d.nameBn) || d.name,
          featureLabel: (f) => (lang === "bn" && f.labelBn) || f.label,
          kind: (k) => kindWords(t, k),
          feature: (k) => (k === FeatureKind.DRIVER ? t.features.driver : k === FeatureKind.DOOR ? t.features.door
            : k === FeatureKind.STAIRS ? t.features.stairs : k === FeatureKind.TOILET ? t.features.toilet : ""),
        }, toggle)));
      }, setErr);
    } else if (mapEl.current && layout.sections.length > 0) {
      const el = mapEl.current;
      const drawn = (section ? layout.sections.filter((x) => x.name === section) : layout.sections)
        .map((x) => ({ ...x, name: sectionName(x.name, show, lang) }));
      run(measured(() => new SeatMapView(el, drawn, labels, toggle)));
    } else {
      run(undefined);
    }
    return () => {
      stopped = true;
      clearInterval(timer);
      if (vm) venueView.current = vm.viewState();
      v?.destroy?.();
      venue.current = undefined;
    };
  }, [layout, show, lang, section]);

  useEffect(() => view.current?.setChosen(chosen), [chosen]);

  // Back to a tab left open: a hold made, ordered or released in another
  // tab meanwhile shows as it is now.
  useEffect(() => {
    const back = () => {
      if (document.hidden) return;
      api.holds.listMyHolds({ showId }).then((r) => keepHolds(r.holds), () => undefined);
    };
    document.addEventListener("visibilitychange", back);
    return () => document.removeEventListener("visibilitychange", back);
  }, [showId]);

  // The holds' countdown.
  useEffect(() => {
    if (holds.length === 0) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [holds.length > 0]);

  const leftOf = (h: Hold) => ((tsDate(h.expiresAt)?.getTime() ?? 0) - now) / 1000;
  const expired = holds.filter((h) => leftOf(h) <= 0).length;
  useEffect(() => {
    if (expired > 0) {
      keepHolds(holds.filter((h) => leftOf(h) > 0));
      setGone(undefined);
      setMsg(t.holdExpired);
    }
  }, [expired]);

  const opts = queueToken && queueToken !== "-" ? withQueueToken(queueToken) : undefined;

  // The kind of each seat that is not an ordinary one, from the layout;
  // the kinds the map draws, for the legend (the coach and the venue map
  // draw them, the SVG seat map does not).
  const kinds = useMemo(() => {
    const m = new Map<string, SeatKind>();
    for (const sec of layout?.sections ?? []) {
      for (const r of sec.rows) r.kinds.forEach((k, i) => k !== SeatKind.ORDINARY_UNSPECIFIED && m.set(r.seats[i], k));
    }
    const drawn = layout && (show?.kind !== ShowKind.BUS_TRIP || isCoach(layout));
    return { of: m, legend: drawn ? [...new Set(m.values())].sort((a, b) => a - b) : [] };
  }, [layout, show?.kind]);
  const womenChosen = chosen.filter((s) => kinds.of.get(s) === SeatKind.WOMEN);

  // The buyer's journey on a trip with stops (from and to in the address):
  // its stops, and the counters to board at and leave at.
  const stops = (from || to) && layout ? layout.stops : [];
  const fromStop = stops.find((x) => x.stopId === layout?.fromStopId);
  const toStop = stops.find((x) => x.stopId === layout?.toStopId);
  const boarding = fromStop?.counters.filter((c) => c.boarding) ?? [];
  const dropping = toStop?.counters.filter((c) => c.dropping) ?? [];
  const boardAt = boarding.find((c) => c.counterId === board) ?? boarding[0];
  const dropAt = dropping.find((c) => c.counterId === drop) ?? dropping[0];
  const journey = fromStop && toStop
    ? { fromStopId: fromStop.stopId, toStopId: toStop.stopId, boardingCounterId: boardAt?.counterId ?? "", droppingCounterId: dropAt?.counterId ?? "" }
    : undefined;
  const named = (x: { name: string; nameBn: string }) => (lang === "bn" && x.nameBn) || x.name;
  const place = (x: { place: string; placeBengali: string }) => (lang === "bn" && x.placeBengali) || x.place;
  const counterTime = (c: Counter) => showTime(c.atLocal, tsDate(c.at), lang);
  // A counter in the choice: its name and the time of day (the day is the
  // journey's, said above it), short enough for a phone.
  const counterClock = (c: Counter) => { const d = tsDate(c.at); return d ? clock(d, lang, c.atLocal?.timeZone || undefined) : ""; };

  // Holds the chosen seats; a seat for women only with its passenger
  // declared a woman (the server refuses it too).
  function holdChosen() {
    const undeclared = womenChosen.filter((s) => !declared.includes(s));
    if (undeclared.length) {
      setGone(undefined);
      setMsg(t.womenUndeclared(undeclared.join(", ")));
      document.getElementById(`woman-${undeclared[0]}`)?.focus();
      return;
    }
    void takeHold({ seats: chosen, womenSeats: womenChosen });
  }

  async function takeHold(req: { seats?: string[]; gaArea?: string; quantity?: number; womenSeats?: string[] }) {
    setBusy(true);
    setErr(undefined);
    setMsg("");
    setGone(undefined);
    setCap(undefined);
    try {
      const r = await api.holds.createHold({ showId, journey, ...req }, opts);
      keepHolds([...holds, r.hold!]);
      setChosen([]);
      setDeclared([]);
    } catch (e) {
      const capped = e instanceof ConnectError ? e.findDetails(AccountSeatCapSchema)[0] : undefined;
      if (e instanceof SeatsUnavailableError) {
        if (e.seats.length) {
          await seatsGone(e.seats);
        } else {
          setGa((areas) => areas.map((a) => (a.name === e.gaArea ? { ...a, remaining: e.remaining } : a)));
          setMsg(t.placesLeft(digits(e.remaining, lang)));
        }
      } else if (capped) {
        setCap(capped);
      } else if (e instanceof QueueTokenError) {
        sessionStorage.removeItem(queueTokenKey(showId));
        go(`/wait/${showId}`);
      } else {
        setErr(e);
      }
    } finally {
      setBusy(false);
    }
  }

  // On to the order: an ordered hold's (made in another tab, or before a
  // reload), else a new one; a bus trip's seats name their passengers
  // first (decision 0380).
  const ordersHere = (hold: Hold) => hold.status !== HoldStatus.ORDERED && !(show?.kind === ShowKind.BUS_TRIP && hold.seats.length > 0);
  async function order(hold: Hold) {
    if (hold.status === HoldStatus.ORDERED) {
      go(`/order/${hold.orderId}`);
      return;
    }
    if (show?.kind === ShowKind.BUS_TRIP && hold.seats.length > 0) {
      go(`/passengers/${hold.holdId}`);
      return;
    }
    const bad = contactProblems(guest, contact, t);
    setContactBad(bad);
    if (Object.keys(bad).length > 0) {
      document.getElementById(Object.keys(bad)[0]!)?.focus();
      return;
    }
    setBusy(true);
    setErr(undefined);
    try {
      const r = await api.orders.createOrder({ holdId: hold.holdId, contact: checkoutContact(contact, lang) });
      go(`/order/${r.order!.orderId}`);
    } catch (e) {
      const wrong = e instanceof InvalidRequestError && (e.field("contact.phone") ? CONTACT_PHONE : e.field("contact.email") ? CONTACT_EMAIL : "");
      if (wrong) {
        setContactBad({ [wrong]: wrong === CONTACT_PHONE ? t.badPhone : t.badEmail });
        setBusy(false);
        document.getElementById(wrong)?.focus();
        return;
      }
      // Another tab may have ordered it meanwhile: then on to that order.
      const now = await api.holds.listMyHolds({ showId }).then((r) => r.holds, () => undefined);
      const ordered = now?.find((h) => h.holdId === hold.holdId && h.status === HoldStatus.ORDERED);
      if (ordered) {
        go(`/order/${ordered.orderId}`);
        return;
      }
      if (now) keepHolds(now);
      setErr(e);
      setBusy(false);
    }
  }

  // An ordered hold is given back by cancelling its unpaid order.
  async function release(hold: Hold) {
    setBusy(true);
    try {
      if (hold.status === HoldStatus.ORDERED) await api.orders.cancelOrder({ orderId: hold.orderId });
      else await api.holds.releaseHold({ holdId: hold.holdId });
      keepHolds(holds.filter((h) => h.holdId !== hold.holdId));
    } catch (e) {
      setErr(e);
    } finally {
      setBusy(false);
    }
  }

  if (!show || !layout) {
    return (
      <>
        <ErrorNote err={err} />
        {!err && <p>{t.loading}</p>}
      </>
    );
  }
  const total = chosen.reduce((sum, s) => sum + (prices.current.get(s) ?? 0n), 0n);
  // An area's price is the layout's: a refresh (availability only) names
  // each area with what is left, not its price.
  const areaPrice = (name: string) => layout.gaAreas.find((x) => x.name === name)?.priceMinor ?? 0n;
  const head = (
    <>
      <h1 tabIndex={-1}>{showName(show.title, show, lang)}</h1>
      <p class="meta">
        {route(show, lang)}
        {show.operator && ` · ${operatorName(show, lang)}`} · {showTime(show.startsAtLocal, tsDate(show.startsAt), lang)}
      </p>
      <StatusNote show={show} />
    </>
  );
  // Nothing to choose on a show cancelled or over (a trip with stops that
  // has left its first stop may still sell later legs: the API says).
  if (show.status === ShowStatus.CANCELLED || show.status === ShowStatus.ARRIVED ||
    (show.status === ShowStatus.DEPARTED && show.stops.length === 0)) {
    return (
      <>
        {head}
        <p><Link href="/tickets">{t.navTickets}</Link></p>
      </>
    );
  }
  return (
    <>
      {head}
      {fromStop && toStop && (
        <div class="journey" id="journey">
          <p>
            <strong>
              {place(fromStop)} → {place(toStop)}
            </strong>
            {` · ${t.boards}: `}
            {boardAt ? `${counterTime(boardAt)} · ${named(boardAt)}` : showTime(fromStop.departsAtLocal, tsDate(fromStop.departsAt), lang)}
          </p>
          {boarding.length > 0 && (
            <CounterPick id="board" label={t.boardingCounter} list={boarding} value={boardAt?.counterId} set={setBoard} name={named} time={counterClock} />
          )}
          {dropping.length > 0 && (
            <CounterPick id="drop" label={t.droppingCounter} list={dropping} value={dropAt?.counterId} set={setDrop} name={named} time={counterClock} />
          )}
        </div>
      )}
      <div class="layout">
        <div class="mapcol">
          {layout.sections.length > 0 && (
            <>
              <ul class="legend" aria-label={t.legend}>
                <li><span class="key s0" aria-hidden="true" />{t.free}</li>
                <li><span class="key s1" aria-hidden="true" />{t.held}</li>
                <li><span class="key s2" aria-hidden="true" />{t.sold}</li>
                {(mineDrawn || holds.some((h) => h.seats.length > 0)) && <li><span class="key s3" aria-hidden="true" />{t.yours}</li>}
                <li><span class="key chosen" aria-hidden="true">✓</span>{t.selected}</li>
                {kinds.legend.map((k) => (
                  <li key={k}><span class={`key k${k}`} aria-hidden="true">{KIND_MARK[k]}</span>{kindWords(t, k)}</li>
                ))}
              </ul>
              {!section && show.kind !== ShowKind.BUS_TRIP && layout.sections.length > 1 && (
                <div class="sections vm-sections" role="group" aria-label={t.sections}>
                  {layout.sections.map((x, i) => (
                    // From the keyboard (no pointer: detail 0) the focus
                    // goes on into the section's seats.
                    <button type="button" key={x.name} onClick={(e) => venue.current?.showSection(i, e.detail === 0)}>
                      {(lang === "bn" && x.nameBn) || sectionName(x.name, show, lang)} <span class="price">{taka(x.priceMinor, lang)}</span>
                    </button>
                  ))}
                </div>
              )}
              {section && (
                <div class="sections" role="group" aria-label={t.sections}>
                  {layout.sections.map((x) => (
                    <button type="button" key={x.name} aria-pressed={x.name === section} onClick={() => setSection(x.name)}>
                      {sectionName(x.name, show, lang)} <span class="price">{taka(x.priceMinor, lang)}</span>
                    </button>
                  ))}
                </div>
              )}
              <div ref={mapEl} class="seatmap" id="seatmap" />
            </>
          )}
          {ga.map((a) => {
            const q = qty[a.name] ?? 1;
            return (
              <section class="ga" key={a.name}>
                <h3>
                  {a.name} <span class="price">{t.priceEach(taka(areaPrice(a.name), lang))}</span>
                </h3>
                {a.remaining <= 0 ? (
                  <p class="soldout">{t.soldOut}</p>
                ) : (
                  <form
                    onSubmit={(e) => {
                      e.preventDefault();
                      void takeHold({ gaArea: a.name, quantity: q });
                    }}
                  >
                    <p>{t.placesLeft(digits(a.remaining, lang))}</p>
                    <label>
                      {t.quantity}{" "}
                      <input type="number" min={1} max={Math.min(a.remaining, 10)} value={q}
                        onInput={(e) => setQty({ ...qty, [a.name]: Number(e.currentTarget.value) })} />
                    </label>{" "}
                    <button type="submit" disabled={busy}>
                      {t.holdPlaces}
                    </button>
                  </form>
                )}
              </section>
            );
          })}
        </div>
        <aside class="panel" aria-label={t.yourSeats}>
          <p class="live" role="status" aria-live="polite" id="msg">
            {gone ? conflictText(gone) : msg}
          </p>
          <ErrorNote err={err} />
          {cap && (
            <p class="note error" role="alert" id="cap">
              {t.accountCap(digits(cap.held, lang), digits(cap.maxSeats, lang))}{" "}
              <Link href="/tickets">{t.navTickets}</Link>
            </p>
          )}
          {holds.some(ordersHere) && <Contact guest={guest} value={contact} set={(v) => { setContact(v); setContactBad({}); }} bad={contactBad} />}
          {holds.map((hold, i) => (
            <div class="hold" id={i === 0 ? "hold" : undefined} key={hold.holdId} data-hold={hold.holdId}>
              <p>
                {hold.status === HoldStatus.ORDERED ? t.payBy : t.heldFor}{" "}
                <strong role="timer" id={i === 0 ? "countdown" : undefined}>
                  {mmss(leftOf(hold), lang)}
                </strong>
              </p>
              <p>
                {hold.seats.length > 0 ? hold.seats.join(", ") : `${hold.gaArea} × ${digits(hold.quantity, lang)}`}
              </p>
              <p>
                {t.total}: <strong>{hold.amount && taka(hold.amount.amountMinor, lang)}</strong>
              </p>
              <button type="button" class="primary" id={i === 0 ? "to-order" : undefined} disabled={busy} onClick={() => void order(hold)}>
                {t.continueToPay}
              </button>{" "}
              <button type="button" onClick={() => void release(hold)} disabled={busy}>
                {t.release}
              </button>
            </div>
          ))}
          {soldOut ? (
            <p class="soldout" id="soldout">
              {t.soldOut}
            </p>
          ) : layout.sections.length > 0 ? (
            <div id="choice">
              <h2>{t.yourSeats}</h2>
              {chosen.length === 0 ? (
                <p class="note">{t.noSeatsChosen}</p>
              ) : (
                <>
                  <p id="chosen">{chosen.join(", ")}</p>
                  <p>
                    {t.total}: <strong id="total">{taka(total, lang)}</strong>
                  </p>
                </>
              )}
              {womenChosen.length > 0 && (
                <fieldset class="women" id="women">
                  <legend>{t.womenTitle}</legend>
                  <p class="note">{t.womenNote}</p>
                  {womenChosen.map((s) => (
                    <label key={s}>
                      <input type="checkbox" id={`woman-${s}`} checked={declared.includes(s)}
                        onChange={(e) => setDeclared((d) => (e.currentTarget.checked ? [...d, s] : d.filter((x) => x !== s)))} />{" "}
                      {t.womanDeclare(s)}
                    </label>
                  ))}
                </fieldset>
              )}
              <button type="button" class="primary" id="hold-seats" disabled={busy || chosen.length === 0}
                onClick={holdChosen}>
                {chosen.length === 1 ? t.holdOne : t.holdSeats(digits(chosen.length, lang))}
              </button>
            </div>
          ) : null}
        </aside>
      </div>
    </>
  );
}

/** A choice of one of a stop's counters, by name and time. */
function CounterPick(props: {
  id: string; label: string; list: Counter[]; value?: string; set: (id: string) => void;
  name: (c: Counter) => string; time: (c: Counter) => string;
}) {
  return (
    <label>
      {props.label}{" "}
      <select id={props.id} value={props.value} onChange={(e) => props.set(e.currentTarget.value)}>
        {props.list.map((c) => (
          <option key={c.counterId} value={c.counterId}>
            {props.name(c)} · {props.time(c)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The seat kinds by their numbers, ordinary first (the venue map's words
 * of each are indexed by kind). */
const KINDS = [SeatKind.ORDINARY_UNSPECIFIED, SeatKind.BUSINESS, SeatKind.SLEEPER, SeatKind.WOMEN, SeatKind.WHEELCHAIR, SeatKind.BLOCKED];

/** The glyph of a kind in the legend, as the maps mark their seats (the
 * coach's berth is marked by its shape, the legend's key narrow). */
const KIND_MARK: Partial<Record<SeatKind, string>> = {
  [SeatKind.WOMEN]: "♀", [SeatKind.WHEELCHAIR]: "♿", [SeatKind.BLOCKED]: "✕", [SeatKind.BUSINESS]: "B", [SeatKind.SLEEPER]: "▭",
};

/** The words of a seat kind (the coach's, the venue map's and the
 * legend's); "" for an ordinary seat. */
function kindWords(t: Strings, k: number): string {
  const w = t.kinds;
  return k === SeatKind.WOMEN ? w.women : k === SeatKind.BUSINESS ? w.business : k === SeatKind.SLEEPER ? w.sleeper
    : k === SeatKind.WHEELCHAIR ? w.wheelchair : k === SeatKind.BLOCKED ? w.blocked : "";
}

/**
 * What a buyer must know of a show before choosing (decision 0478): its
 * operator cancelled it (paid tickets are refunded in full), moved it to
 * the time above (from when, and why), or it is over; a coach gone from
 * its first stop may still sell seats from later stops.
 */
function StatusNote({ show }: { show: Show }) {
  const { t, lang } = useApp();
  const why = (reason: string) => (reason ? ` ${t.statusReason(reason)}` : "");
  switch (show.status) {
    case ShowStatus.CANCELLED:
      return <p class="note error" role="alert" id="show-status">{t.statusCancelled}{why(show.cancelReason)}</p>;
    case ShowStatus.DELAYED:
      return (
        <p class="note" role="status" id="show-status">
          {t.statusDelayed(showTime(show.startsAtLocal, tsDate(show.scheduledStartsAt), lang))}{why(show.rescheduleReason)}
        </p>
      );
    case ShowStatus.DEPARTED:
      return <p class="note" id="show-status">{show.stops.length > 0 ? t.statusLeft : t.statusOver}</p>;
    case ShowStatus.ARRIVED:
      return <p class="note" id="show-status">{t.statusOver}</p>;
    default:
      return null;
  }
}
