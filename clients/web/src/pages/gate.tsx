// The gate: pick the show (it starts on the one the staff member's
// organisation runs next), scan a ticket's QR with the camera (the
// browser's BarcodeDetector, where there is one) or type its code or id,
// and read the answer in large type, with the count of the show's tickets
// checked in at every gate so far (each scan's answer carries it). A ticket
// of another show of the organisation says which, and offers to switch.
// With no network it admits from the show's list kept on the device and
// syncs later (../gate/, loaded on its own; docs/gate-offline.md). On a bus
// trip with stops the gate says which stop it stands at (remembered per
// show): a ticket boarding at another stop is refused, online by the server
// and offline from the list, naming where it boards (decisions 0384, 0408).
import { useEffect, useRef, useState } from "preact/hooks";
import { Code, ConnectError, TicketOfOtherShowSchema, asSeatghorError } from "@seatghor/client";
import type { CheckInTicketRequest, CheckInTicketResponse, Show, TripStop } from "@seatghor/client";

import { NeedSession, sayError, useApp } from "../app.js";
import { SHOW_ZONE, clock, digits, showTime, tsDate } from "../i18n.js";
import type { Lang } from "../i18n.js";
import "../staffreasons.js";
import type { GateEngine, OfflineVerdict } from "../gate/engine.js";

/** The gate's offline side, built on its own into assets/gate.js. */
type Offline = typeof import("../gate/index.js");

/** Loads the offline side: a URL, not a module esbuild would bundle here. */
function loadOffline(): Promise<Offline> {
  return import(/* the gate's own bundle */ new URL("gate.js", import.meta.url).href) as Promise<Offline>;
}

interface Detector {
  detect(source: HTMLVideoElement): Promise<{ rawValue: string }[]>;
}
declare global {
  // eslint-disable-next-line no-var
  var BarcodeDetector: (new (opts: { formats: string[] }) => Detector) | undefined;
}

type Verdict =
  | { kind: "ok"; r: CheckInTicketResponse }
  | { kind: "again"; r: CheckInTicketResponse }
  | { kind: "bad"; why: string }
  | { kind: "other"; show: Show | undefined; value: string }
  // Refused online: the ticket boards at another stop (stop: where, when
  // the device's list says; why: the reason's sentence otherwise).
  | { kind: "elsewhere"; stop: string | undefined; why: string }
  | { kind: "offline"; v: OfflineVerdict };

/** The gate page's words (staff's: beside the page, out of the buyer's first load). */
const GATE_EN = {
  gateTitle: "Gate check-in",
  gateShow: "Show",
  gateName: "Gate",
  code: "Ticket code or ticket id",
  check: "Check",
  scan: "Scan with the camera",
  stopScan: "Stop the camera",
  noCamera: "This browser cannot read QR codes; type the code instead.",
  admitted: "ADMITTED",
  already: (when: string, gate: string) => `ALREADY CHECKED IN at ${when}${gate ? ` (${gate})` : ""}`,
  notValid: "NOT VALID",
  admittedCount: (n: string) => `Checked in at every gate so far: ${n}`,
  gateOnly: "The gate page is for operators, gate staff and admins.",
  otherShow: (show: string, time: string) => `This ticket is for another show: ${show}, ${time}.`,
  otherShowUnknown: "This ticket is for another show.",
  switchShow: (show: string) => `Switch to ${show}`,
};

const GATE_WORDS: Record<Lang, typeof GATE_EN> = {
  en: GATE_EN,
  bn: {
    gateTitle: "গেটে টিকিট যাচাই",
    gateShow: "অনুষ্ঠান বা যাত্রা",
    gateName: "গেট",
    code: "টিকিটের কোড বা আইডি",
    check: "যাচাই",
    scan: "ক্যামেরায় স্ক্যান",
    stopScan: "ক্যামেরা বন্ধ",
    noCamera: "এই ব্রাউজার কিউআর কোড পড়তে পারে না; কোডটি লিখুন।",
    admitted: "প্রবেশ অনুমোদিত",
    already: (when, gate) => `আগেই প্রবেশ করেছেন ${when}${gate ? ` (${gate})` : ""}`,
    notValid: "বৈধ নয়",
    admittedCount: (n) => `সব গেটে এ পর্যন্ত প্রবেশ: ${n}`,
    gateOnly: "গেটের পাতা অপারেটর, গেটকর্মী ও অ্যাডমিনদের জন্য।",
    otherShow: (show, time) => `এই টিকিট অন্য একটির: ${show}, ${time}।`,
    otherShowUnknown: "এই টিকিট অন্য একটি অনুষ্ঠান বা যাত্রার।",
    switchShow: (show) => `${show}-এ যান`,
  },
};

/** The stop selector's words (the gate's own, beside the page). */
const STOP_WORDS = {
  en: { stop: "Stop this gate is at", noStop: "None chosen: tickets of every stop" },
  bn: { stop: "এই গেট কোন স্টপে", noStop: "বাছাই করা হয়নি: সব স্টপের টিকিট চলবে" },
} as const;

/** A trip's stop in the UI's language: the gazetteer's Bengali name in the Bengali UI. */
function placeOf(stops: readonly TripStop[], stopId: string, lang: Lang): string {
  const s = stops.find((x) => x.stopId === stopId);
  return s ? (lang === "bn" && s.placeBengali) || s.place : stopId;
}

const NO_STOPS: TripStop[] = [];

/** Where the gate's stop on a show is remembered. */
const stopKey = (show: string) => `seatghor.gate.stop.${show}`;

/** A show that began less than this long ago is still the gate's (decision 0296). */
const UNDER_WAY_MS = 3 * 60 * 60 * 1000;

/**
 * The show a gate starts on (decision 0296): in a list soonest first, the
 * first that began less than UNDER_WAY_MS ago or is still to begin; when
 * all began longer ago, the last of them (today's).
 */
function startingShow(shows: Show[], now: number): Show | undefined {
  return shows.find((s) => (tsDate(s.startsAt)?.getTime() ?? 0) > now - UNDER_WAY_MS) ?? shows[shows.length - 1];
}

/**
 * What was typed or scanned, as CheckInTicket reads it (decision 0298): a
 * printed ticket id ("tkt_…", whose alphabet is lower case) trimmed and in
 * lower case, whatever the phone capitalised; a QR code trimmed, its case
 * kept (it is signed base64url).
 */
function scanned(raw: string): CheckInTicketRequest["ticket"] | undefined {
  const value = raw.trim();
  if (!value) return undefined;
  const id = value.toLowerCase();
  return id.startsWith("tkt_") ? { case: "ticketId", value: id } : { case: "code", value };
}

/** Whether a call failed for the network's sake, not by the server's answer. */
function networkFailed(err: unknown): boolean {
  if (!(err instanceof ConnectError)) return err instanceof TypeError;
  return (
    err.code === Code.Unavailable ||
    err.code === Code.DeadlineExceeded ||
    err.code === Code.Canceled ||
    (err.code === Code.Unknown && err.cause instanceof TypeError)
  );
}

function byStart(a: Show, b: Show): number {
  return (tsDate(a.startsAt)?.getTime() ?? 0) - (tsDate(b.startsAt)?.getTime() ?? 0);
}

export function GatePage() {
  return (
    <NeedSession>
      <GateInner />
    </NeedSession>
  );
}

function GateInner() {
  const { api, lang, session } = useApp();
  const gw = GATE_WORDS[lang];
  const [shows, setShows] = useState<Show[]>([]);
  const [show, setShow] = useState(new URLSearchParams(location.search).get("show") ?? "");
  const [gate, setGate] = useState(localStorage.getItem("seatghor.gate") ?? "gate-1");
  const [code, setCode] = useState("");
  const [verdict, setVerdict] = useState<Verdict>();
  const [count, setCount] = useState<bigint | null>(null);
  const [scanning, setScanning] = useState(false);
  const video = useRef<HTMLVideoElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  const [offline, setOffline] = useState<Offline>();
  const [engine, setEngine] = useState<GateEngine>();
  const gateName = useRef(gate);
  gateName.current = gate;
  // The stop of the trip this gate stands at ("" for none), per show.
  const [stop, setStop] = useState(() => (show ? localStorage.getItem(stopKey(show)) ?? "" : ""));
  useEffect(() => setStop(show ? localStorage.getItem(stopKey(show)) ?? "" : ""), [show]);
  const current = shows.find((s) => String(s.showId) === show);
  const stops = current?.stops ?? NO_STOPS;
  // The stop scans are checked against: the one chosen, on a trip with
  // stops (kept from before when the shows could not be read, offline).
  const stopId = current && stops.every((x) => x.stopId !== stop) ? "" : stop;
  const stopRef = useRef(stopId);
  stopRef.current = stopId;

  // The offline side: its code, then the device's store (IndexedDB). A
  // browser without IndexedDB checks in online only.
  useEffect(() => {
    if (session?.role === "user") return;
    let live = true;
    loadOffline()
      .then(async (m) => {
        const e = await m.GateEngine.open(api, { networkFailed, signedOut: (err) => err instanceof ConnectError && err.code === Code.Unauthenticated });
        if (live) {
          setOffline(m);
          setEngine(e);
        }
      })
      .catch((e: unknown) => console.warn("the gate works online only:", e));
    return () => {
      live = false;
    };
  }, []);
  // The show's list kept ready, and scans synced, in the background.
  useEffect(() => {
    if (!engine || !show) return;
    return engine.watch(show, () => gateName.current, () => stopRef.current);
  }, [engine, show]);

  // The shows this caller checks in, from the start of the gate's day (the
  // gate stands where the show is), soonest first (decision 0296).
  useEffect(() => {
    const today = new Date();
    today.setHours(0, 0, 0, 0);
    const startsFrom = { seconds: BigInt(Math.floor(today.getTime() / 1000)), nanos: 0 };
    api.catalog
      .listShows({ forGate: true, startsFrom, pageSize: 200 })
      .then(async (r) => {
        const list = [...r.shows];
        const asked = show && list.every((s) => String(s.showId) !== show) ? await lookUp(BigInt(show)) : undefined;
        if (asked) list.push(asked);
        list.sort(byStart);
        setShows(list);
        if (!show) {
          const first = startingShow(list, Date.now());
          if (first) setShow(String(first.showId));
        }
      })
      .catch(() => setShows([]));
  }, []);
  useEffect(() => setCount(null), [show]);

  async function lookUp(id: bigint): Promise<Show | undefined> {
    return api.catalog
      .getShow({ showId: id })
      .then((r) => r.show)
      .catch(() => undefined);
  }

  async function decideOffline(raw: string) {
    const v = await engine!.decide(show, raw, gate, stopId);
    setVerdict({ kind: "offline", v });
  }

  async function check(raw: string) {
    const ticket = scanned(raw);
    if (!ticket || !show) return;
    if (engine && !navigator.onLine) {
      await decideOffline(raw);
      setCode("");
      input.current?.focus();
      return;
    }
    try {
      // A network that is there but does not answer (a gate's weak signal)
      // is given a few seconds, then the device decides.
      const r = await api.tickets.checkInTicket({ showId: BigInt(show), gate, ticket, stopId }, { timeoutMs: engine ? 6000 : undefined });
      setCount(r.admittedCount);
      if (engine && r.ticket) {
        const at = tsDate(r.ticket.checkedInAt)?.getTime();
        void engine.rememberOnline(show, r.ticket.ticketId, r.ticket.seat, r.ticket.gaArea, at, r.ticket.checkedInGate);
      }
      if (r.admitted) {
        setVerdict({ kind: "ok", r });
      } else {
        setVerdict({ kind: "again", r });
      }
    } catch (e) {
      if (engine && networkFailed(e)) {
        await decideOffline(raw);
        setCode("");
        input.current?.focus();
        return;
      }
      // A ticket of another show this gate's staff check in: say which,
      // and offer it (decision 0297).
      const other = e instanceof ConnectError ? e.findDetails(TicketOfOtherShowSchema)[0] : undefined;
      if (other) {
        const known = shows.find((s) => s.showId === other.showId) ?? (await lookUp(other.showId));
        setVerdict({ kind: "other", show: known, value: raw.trim() });
      } else if (asSeatghorError(e)?.reason === "TICKET_BOARDS_ELSEWHERE") {
        // The server's message names the stop but is not for staff to
        // read; the device's list says where the ticket boards.
        const at = engine ? await engine.boardingStopOf(show, raw).catch(() => undefined) : undefined;
        setVerdict({ kind: "elsewhere", stop: at, why: sayError(e, lang) });
      } else {
        const why = e instanceof ConnectError && e.code === Code.PermissionDenied ? gw.gateOnly : sayError(e, lang);
        setVerdict({ kind: "bad", why });
      }
    }
    setCode("");
    input.current?.focus();
  }

  function chooseStop(to: string) {
    setStop(to);
    if (to) localStorage.setItem(stopKey(show), to);
    else localStorage.removeItem(stopKey(show));
  }

  function switchTo(to: Show, value: string) {
    if (shows.every((s) => s.showId !== to.showId)) setShows([...shows, to].sort(byStart));
    setShow(String(to.showId));
    setVerdict(undefined);
    // The code stays for a second Check: admitting at the other show is
    // the staff member's choice (decision 0297).
    setCode(value);
    input.current?.focus();
  }

  // The camera, where the browser can read QR codes.
  useEffect(() => {
    if (!scanning || !globalThis.BarcodeDetector || !video.current) return;
    const detector = new globalThis.BarcodeDetector({ formats: ["qr_code"] });
    let stream: MediaStream | undefined;
    let stopped = false;
    let last = "";
    void navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" } }).then(async (s) => {
      stream = s;
      const v = video.current!;
      v.srcObject = s;
      await v.play();
      while (!stopped) {
        const found = await detector.detect(v).catch(() => []);
        const value = found[0]?.rawValue;
        if (value && value !== last) {
          last = value;
          await check(value);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    });
    return () => {
      stopped = true;
      stream?.getTracks().forEach((tr) => tr.stop());
    };
  }, [scanning, show, gate, stopId]);

  const zone = current?.startsAtLocal?.timeZone || SHOW_ZONE;
  // The offline state and the supervisor's panel, a tree of the offline
  // side's own.
  useEffect(() => {
    const el = panel.current;
    if (!offline || !engine || !show || !el) return;
    offline.renderPanel(el, { engine, lang, zone, showId: show, gate, stopId, stops });
  }, [offline, engine, show, lang, zone, gate, stopId, stops]);
  useEffect(() => {
    const el = panel.current;
    return () => {
      if (offline && el) offline.renderPanel(el, null);
    };
  }, [offline]);

  if (session && session.role === "user") {
    // Gate staff are operators in their organisation (decision 0075);
    // the server decides, this only saves a buyer a useless page.
    return <p class="note">{gw.gateOnly}</p>;
  }
  const r = verdict && (verdict.kind === "ok" || verdict.kind === "again") ? verdict.r : undefined;
  const where = r?.ticket ? r.ticket.seats.join(", ") || r.ticket.seat || r.ticket.gaArea : "";
  const g = offline?.gateStrings(lang);
  const off = verdict?.kind === "offline" ? verdict.v : undefined;
  const offClass = off ? ({ ok: "ok", again: "again", bad: "bad" } as const)[off.kind] : "";
  return (
    <>
      <h1 tabIndex={-1}>{gw.gateTitle}</h1>
      <form
        class="gate"
        onSubmit={(e) => {
          e.preventDefault();
          void check(code);
        }}
      >
        <label>
          {gw.gateShow}
          <select id="gate-show" value={show} onChange={(e) => setShow(e.currentTarget.value)}>
            {shows.map((s) => (
              <option key={String(s.showId)} value={String(s.showId)}>
                {s.title} · {showTime(s.startsAtLocal, tsDate(s.startsAt), lang)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {gw.gateName}
          <input id="gate-name" value={gate} onInput={(e) => {
            setGate(e.currentTarget.value);
            localStorage.setItem("seatghor.gate", e.currentTarget.value);
          }} />
        </label>
        {stops.length > 0 && (
          <label>
            {STOP_WORDS[lang].stop}
            <select id="gate-stop" value={stopId} onChange={(e) => chooseStop(e.currentTarget.value)}>
              <option value="">{STOP_WORDS[lang].noStop}</option>
              {stops.map((x) => (
                <option key={x.stopId} value={x.stopId}>
                  {placeOf(stops, x.stopId, lang)}
                  {x.departsAt ? ` · ${clock(tsDate(x.departsAt)!, lang, zone)}` : ""}
                </option>
              ))}
            </select>
          </label>
        )}
        <label class="wide">
          {gw.code}
          {/* Codes and ids are typed as printed: no capital the phone adds,
              no word it corrects (decision 0298). autoCorrect, not
              autocorrect: Chromium's autocorrect property is a boolean
              that reads "off" as true; the attribute is what it means. */}
          <input
            id="gate-code"
            ref={input}
            value={code}
            autocomplete="off"
            autocapitalize="off"
            autoCorrect="off"
            spellcheck={false}
            onInput={(e) => setCode(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary" id="gate-check">
          {gw.check}
        </button>
      </form>
      {globalThis.BarcodeDetector ? (
        <p>
          <button type="button" onClick={() => setScanning(!scanning)}>
            {scanning ? gw.stopScan : gw.scan}
          </button>
        </p>
      ) : (
        <p class="note">{gw.noCamera}</p>
      )}
      {scanning && <video ref={video} class="camera" muted playsInline />}
      <div id="verdict" role="status" aria-live="assertive" class={`verdict ${off ? offClass : verdict?.kind === "elsewhere" ? "bad" : (verdict?.kind ?? "")}`}>
        {off && g && offline && (
          <>
            {off.kind === "ok" && <p class="huge">✓ {gw.admitted}</p>}
            {off.kind === "again" && (
              <p class="huge">⚠ {gw.already(offline.clockSeconds(off.at, lang, zone), off.gate)}</p>
            )}
            {off.kind === "bad" && <p class="huge">✗ {gw.notValid}</p>}
            {off.kind !== "bad" && <p>{off.place}</p>}
            {off.kind === "bad" && (
              <p>
                {off.why === "otherShow"
                  ? g.otherShow(shows.find((x) => String(x.showId) === off.show)?.title ?? digits(off.show ?? "", lang))
                  : off.why === "boardsElsewhere"
                    ? g.boardsElsewhere(placeOf(stops, off.stop ?? "", lang))
                    : g[off.why]}
              </p>
            )}
            <p class="note" id="verdict-offline">
              {g.offlineNote}
            </p>
          </>
        )}
        {verdict?.kind === "ok" && (
          <>
            <p class="huge">✓ {gw.admitted}</p>
            <p>{where}</p>
          </>
        )}
        {verdict?.kind === "again" && (
          <>
            <p class="huge">
              ⚠ {gw.already(r?.ticket?.checkedInAt ? clock(tsDate(r.ticket.checkedInAt)!, lang) : "", r?.ticket?.checkedInGate ?? "")}
            </p>
            <p>{where}</p>
          </>
        )}
        {verdict?.kind === "bad" && (
          <>
            <p class="huge">✗ {gw.notValid}</p>
            <p>{verdict.why}</p>
          </>
        )}
        {verdict?.kind === "elsewhere" && (
          <>
            <p class="huge">✗ {gw.notValid}</p>
            <p id="boards-elsewhere">{verdict.stop && g ? g.boardsElsewhere(placeOf(stops, verdict.stop, lang)) : verdict.why}</p>
          </>
        )}
        {verdict?.kind === "other" && (
          <>
            <p class="huge">✗ {gw.notValid}</p>
            {verdict.show ? (
              <>
                <p id="other-show">{gw.otherShow(verdict.show.title, showTime(verdict.show.startsAtLocal, tsDate(verdict.show.startsAt), lang))}</p>
                <p>
                  <button type="button" id="gate-switch" onClick={() => switchTo(verdict.show!, verdict.value)}>
                    {gw.switchShow(verdict.show.title)}
                  </button>
                </p>
              </>
            ) : (
              <p id="other-show">{gw.otherShowUnknown}</p>
            )}
          </>
        )}
      </div>
      {count !== null && <p id="gate-count">{gw.admittedCount(digits(count, lang))}</p>}
      <div id="gate-panel" ref={panel} />
    </>
  );
}
