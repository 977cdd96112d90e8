// The trip supervisor's manifest (decision 0442), a bundle of its own
// (assets/manifest.js) that only /manifest/<show> loads: passengers by seat with their phone, journey
// and boarding counter, in large touch targets for a phone at the coach
// door. "Boarded" checks the ticket in (as a scan would); "No-show" is
// offered once the coach has left the passenger's stop and puts the seat's
// later legs back on sale. The coach's progress is marked here too: gone
// from the stop chosen (every channel stops selling journeys from there)
// and arrived (MarkTrip, decision 0468). The list refreshes every 15
// seconds; the CSV is the server's (Bengali names intact).
import { useEffect, useState } from "preact/hooks";
import { render } from "preact";
import { BoardingStatus, CatalogService, ManifestService, SalesChannel, ShowStatus, TicketService, TripMark, createServiceClient } from "@seatghor/client";
import type { GetManifestResponse, ManifestEntry, Show } from "@seatghor/client";

import { clock, digits, showTime, tsDate } from "../i18n.js";
import type { Lang } from "../i18n.js";
import { sayError } from "../say.js";
import "../staffreasons.js";
import { loadSession } from "../session.js";

const WORDS = {
  en: {
    title: "Manifest", stop: "Passengers boarding at", all: "Every stop", boarded: "Boarded", noShow: "No-show",
    expected: "Expected", seat: "Seat", csv: "Download CSV", pdf: "Print (PDF)", partner: "Partner", web: "Web", counter: "Counter", woman: "woman",
    call: "Call", refresh: "Refresh", empty: "No paid passengers here.", counts: (e: number, b: number, n: number) =>
      `${e} expected · ${b} boarded · ${n} no-show`, resold: (legs: number) => `${legs} later leg(s) back on sale`,
    countersUntil: (t: string) => `at the counters first until ${t}`,
    trip: "The coach", left: "The coach has left", firstStop: "its first stop", arrived: "The coach has arrived",
    statuses: ["", "scheduled", "delayed", "boarding", "departed", "arrived", "cancelled", "draft"],
  },
  bn: {
    title: "যাত্রী তালিকা", stop: "যে স্টপে উঠবেন", all: "সব স্টপ", boarded: "উঠেছেন", noShow: "অনুপস্থিত",
    expected: "অপেক্ষমাণ", seat: "আসন", csv: "CSV নামান", pdf: "প্রিন্ট (PDF)", partner: "পার্টনার", web: "ওয়েব", counter: "কাউন্টার", woman: "নারী",
    call: "ফোন", refresh: "আবার দেখুন", empty: "এখানে টাকা দেওয়া কোনো যাত্রী নেই।", counts: (e: number, b: number, n: number) =>
      digits(`অপেক্ষমাণ ${e} · উঠেছেন ${b} · অনুপস্থিত ${n}`, "bn"), resold: (legs: number) =>
      digits(`পরের ${legs}টি অংশ আবার বিক্রিতে`, "bn"),
    countersUntil: (t: string) => `${t} পর্যন্ত কাউন্টারে আগে বিক্রি`,
    trip: "কোচ", left: "কোচ ছেড়ে গেছে:", firstStop: "প্রথম স্টপ", arrived: "কোচ পৌঁছেছে",
    statuses: ["", "সময়মতো", "দেরিতে", "যাত্রী উঠছে", "ছেড়ে গেছে", "পৌঁছেছে", "বাতিল", "খসড়া"],
  },
} as const;

/** The three services the page calls, as the signed-in staff member. */
function clients() {
  const options = { baseUrl: location.origin, token: () => loadSession()?.token };
  return {
    manifest: createServiceClient(ManifestService, options),
    catalog: createServiceClient(CatalogService, options),
    tickets: createServiceClient(TicketService, options),
  };
}

/** Renders the manifest of show showId into el; returns what unmounts it. */
export function mount(el: HTMLElement, props: { showId: bigint; lang: Lang }): () => void {
  render(<Manifest showId={props.showId} lang={props.lang} />, el);
  return () => render(null, el);
}

function Manifest({ showId, lang }: { showId: bigint; lang: Lang }) {
  const w = WORDS[lang];
  const [{ manifest, catalog, tickets }] = useState(clients);
  const [show, setShow] = useState<Show>();
  const [stop, setStop] = useState("");
  const [m, setM] = useState<GetManifestResponse>();
  const [error, setError] = useState("");
  const [busy, setBusy] = useState("");

  const load = async () => {
    try {
      setM(await manifest.getManifest({ showId, stopId: stop }));
      setError("");
    } catch (e) {
      setError(sayError(e, lang));
    }
  };
  useEffect(() => {
    catalog.getShow({ showId }).then((r) => setShow(r.show), (e) => setError(sayError(e, lang)));
  }, [showId]);
  useEffect(() => {
    void load();
    const t = setInterval(() => void load(), 15_000);
    return () => clearInterval(t);
  }, [showId, stop, lang]);

  const act = async (e: ManifestEntry, what: "boarded" | "noShow") => {
    setBusy(e.ticketId);
    try {
      if (what === "boarded") {
        await tickets.checkInTicket({ showId, ticket: { case: "ticketId", value: e.ticketId }, gate: "manifest" });
      } else {
        await manifest.markNoShow({ showId, ticketId: e.ticketId });
      }
      await load();
    } catch (err) {
      setError(sayError(err, lang));
    } finally {
      setBusy("");
    }
  };

  const download = async (format: "csv" | "pdf") => {
    try {
      const f = await manifest.exportManifest({ showId, language: lang, format });
      const url = URL.createObjectURL(new Blob([new Uint8Array(f.data)], { type: f.contentType }));
      const a = document.createElement("a");
      a.href = url;
      a.download = f.filename;
      a.click();
      URL.revokeObjectURL(url);
    } catch (e) {
      setError(sayError(e, lang));
    }
  };

  // Where the coach is, as its supervisor marks it (decision 0468): gone
  // from the stop chosen above (the first when every stop is), arrived.
  const markTrip = async (mark: TripMark) => {
    setBusy("trip");
    try {
      const r = await catalog.markTrip({ showId, mark, stopId: mark === TripMark.DEPARTED ? stop : "" });
      setShow(r.show);
      setError("");
    } catch (e) {
      setError(sayError(e, lang));
    } finally {
      setBusy("");
    }
  };
  const stopName = (id: string) => {
    const s = show?.stops.find((x) => x.stopId === id);
    return s ? (lang === "bn" && s.placeBengali) || s.place : w.firstStop;
  };
  const lastStop = show?.stops.length ? show.stops[show.stops.length - 1].stopId : "";
  const title = show ? (lang === "bn" && show.titleBn) || show.title : "";
  return (
    <section class="manifest" aria-labelledby="manifest-title">
      <h1 id="manifest-title">
        {w.title}
        {title && `: ${title}`}
      </h1>
      {show?.startsAt && <p class="note">{showTime(show.startsAtLocal, tsDate(show.startsAt), lang)}</p>}
      {show && show.stops.length > 0 && (
        <label>
          {w.stop}{" "}
          <select id="manifest-stop" value={stop} onChange={(e) => setStop((e.target as HTMLSelectElement).value)}>
            <option value="">{w.all}</option>
            {show.stops.map((s) => (
              <option value={s.stopId} key={s.stopId}>
                {(lang === "bn" && s.placeBengali) || s.place}
              </option>
            ))}
          </select>
        </label>
      )}
      {show && show.status !== ShowStatus.CANCELLED && (
        <p id="trip-progress">
          {w.trip}: <span id="trip-status">{w.statuses[show.status] ?? ""}</span>{" "}
          {show.status !== ShowStatus.ARRIVED && (stop === "" || stop !== lastStop) && (
            <button type="button" id="trip-depart" disabled={busy === "trip"} onClick={() => void markTrip(TripMark.DEPARTED)}>
              {w.left} {stopName(stop)}</button>
          )}{" "}
          {show.status === ShowStatus.DEPARTED && (
            <button type="button" id="trip-arrive" disabled={busy === "trip"} onClick={() => void markTrip(TripMark.ARRIVED)}>{w.arrived}</button>
          )}
        </p>
      )}
      <p role="status" id="manifest-counts">
        {m && w.counts(m.expected, m.boarded, m.noShows)}{" "}
        <button type="button" onClick={() => void load()}>{w.refresh}</button>{" "}
        <button type="button" id="manifest-csv" onClick={() => void download("csv")}>{w.csv}</button>{" "}
        <button type="button" id="manifest-pdf" onClick={() => void download("pdf")}>{w.pdf}</button>
      </p>
      {error && <p role="alert" class="error">{error}</p>}
      {m && m.entries.length === 0 && <p class="note">{w.empty}</p>}
      <ul class="manifest-list" id="manifest-list">
        {m?.entries.map((e) => (
          <Entry e={e} lang={lang} busy={busy === e.ticketId} onAct={act} key={e.ticketId} />
        ))}
      </ul>
    </section>
  );
}

function Entry(props: { e: ManifestEntry; lang: Lang; busy: boolean; onAct: (e: ManifestEntry, what: "boarded" | "noShow") => void }) {
  const { e, lang } = props;
  const w = WORDS[lang];
  const j = e.journey;
  const status =
    e.status === BoardingStatus.BOARDED ? w.boarded : e.status === BoardingStatus.NO_SHOW ? w.noShow : w.expected;
  const counter = j && ((lang === "bn" && j.boardingCounterNameBn) || j.boardingCounterName);
  return (
    <li class={`manifest-entry status-${BoardingStatus[e.status].toLowerCase()}`} data-ticket={e.ticketId}>
      <strong>
        {w.seat} {e.seat || e.gaArea}
      </strong>{" "}
      {e.passengerName} {e.woman && `(${w.woman})`}
      <br />
      {e.phone && (
        <a href={`tel:${e.phone}`}>
          {w.call} {digits(e.phone, lang)}
        </a>
      )}
      {j && (
        <span>
          {" · "}
          {(lang === "bn" && j.fromNameBn) || j.fromName} → {(lang === "bn" && j.toNameBn) || j.toName}
          {counter && ` · ${counter}`}
        </span>
      )}
      {" · "}
      {e.channel === SalesChannel.PARTNER ? `${w.partner} ${e.partnerId}` : e.channel === SalesChannel.COUNTER ? w.counter : w.web}
      <br />
      <span class="status">{status}</span>
      {e.releasedLegs > 0 && <span class="note"> · {w.resold(e.releasedLegs)}</span>}
      {e.counterFirstUntil && (
        <span class="note counters-first"> · {w.countersUntil(clock(tsDate(e.counterFirstUntil)!, lang))}</span>
      )}
      {e.status === BoardingStatus.EXPECTED && (
        <span>
          {" "}
          <button type="button" disabled={props.busy} onClick={() => props.onAct(e, "boarded")}>{w.boarded}</button>{" "}
          <button type="button" disabled={props.busy} onClick={() => props.onAct(e, "noShow")}>{w.noShow}</button>
        </span>
      )}
    </li>
  );
}
