// The operator's ticket counter (decision 0443), a bundle of its own
// (assets/counter.js) that only /counter loads. Keyboard first, for a cheap
// tablet or a PC at the counter: open a cash shift; choose the trip, the
// journey and its boarding counter; type the seats ("A1 A2", or press the
// free ones); the passengers' names (one for all, or one a seat) and the
// phone; take the cash; the 80 mm ticket prints as it is sold (the
// counter's choice, kept) or on a press (decision 0463). A ticket comes back (or a cancelled trip's cash goes out)
// by its order number. Closing the shift with the cash counted shows the
// report, summed from the ledger.
import { useEffect, useState } from "preact/hooks";
import { render } from "preact";
import { CatalogService, CashEntryKind, CounterService, SeatMapService, ShiftStatus, createServiceClient, ticketNumber } from "@seatghor/client";
import type { CashEntry, GetSeatMapResponse, SellTicketsResponse, Show, ShiftReport } from "@seatghor/client";

import { digits, showTime, tsDate } from "../i18n.js";
import type { Lang } from "../i18n.js";
import { sayError } from "../say.js";
import "../staffreasons.js";
import { loadSession } from "../session.js";

const WORDS = {
  en: {
    title: "Counter", shift: "Shift", org: "Operator", counter: "Counter", float: "Cash in the drawer (Tk)",
    open: "Open shift", close: "Close shift", counted: "Cash counted (Tk)", trip: "Trip", from: "From", to: "To",
    boarding: "Boarding counter", seats: "Seats (e.g. A1 A2)", free: "Free seats", name: "Passenger's name",
    phone: "Mobile number", language: "SMS language", sell: "Take cash and sell", sold: "Sold", total: "Cash to take",
    print: "Print ticket", order: "Ticket number (or order id)", refund: "Take ticket back", payOwed: "Pay out cancelled trip",
    gaveBack: "Cash to give back", report: "Shift report", sales: "Sales", refunds: "Refunds", payouts: "Payouts",
    expected: "Expected in the drawer", ledger: "Ledger", difference: "Difference", none: "—", choose: "Choose…",
    opened: "Open since", returns: "Returns and payouts", nameOf: "Name for seat", sameName: "blank: the same",
    autoPrint: "Print each ticket as it is sold",
  },
  bn: {
    title: "কাউন্টার", shift: "শিফট", org: "পরিবহন", counter: "কাউন্টার", float: "ড্রয়ারে নগদ (টাকা)",
    open: "শিফট শুরু", close: "শিফট শেষ", counted: "গোনা নগদ (টাকা)", trip: "যাত্রা", from: "থেকে", to: "পর্যন্ত",
    boarding: "ওঠার কাউন্টার", seats: "আসন (যেমন A1 A2)", free: "খালি আসন", name: "যাত্রীর নাম",
    phone: "মোবাইল নম্বর", language: "এসএমএসের ভাষা", sell: "নগদ নিয়ে বিক্রি", sold: "বিক্রি হয়েছে", total: "নিতে হবে",
    print: "টিকিট প্রিন্ট", order: "টিকিট নম্বর (বা অর্ডার আইডি)", refund: "টিকিট ফেরত", payOwed: "বাতিল যাত্রার টাকা ফেরত",
    gaveBack: "ফেরত দিতে হবে", report: "শিফটের হিসাব", sales: "বিক্রি", refunds: "ফেরত", payouts: "বাতিলের টাকা",
    expected: "ড্রয়ারে থাকার কথা", ledger: "লেজার", difference: "পার্থক্য", none: "—", choose: "বাছুন…",
    opened: "শুরু", returns: "ফেরত ও বাতিলের টাকা", nameOf: "আসনের যাত্রীর নাম:", sameName: "ফাঁকা: একই নাম",
    autoPrint: "বিক্রির সঙ্গে সঙ্গে টিকিট প্রিন্ট",
  },
} as const;

/** The counter's shift id, kept across reloads of the page. */
const SHIFT_KEY = "seatghor.counterShift";
/** Whether each sale prints by itself: the counter's choice, kept ("0" for no). */
const AUTOPRINT_KEY = "seatghor.counterAutoPrint";

/** The services the page calls, as the signed-in clerk. */
function clients() {
  const options = { baseUrl: location.origin, token: () => loadSession()?.token };
  return {
    counter: createServiceClient(CounterService, options),
    catalog: createServiceClient(CatalogService, options),
    seatmap: createServiceClient(SeatMapService, options),
  };
}

/** Renders the counter into el; returns what unmounts it. */
export function mount(el: HTMLElement, props: { lang: Lang }): () => void {
  render(<Counter lang={props.lang} />, el);
  return () => render(null, el);
}

/** Taka as typed ("1,200.50") in paisa; NaN when it is not an amount. */
function paisa(s: string): number {
  const n = Number(s.replace(/[,\s]/g, "").replace(/[০-৯]/g, (d) => String(d.charCodeAt(0) - 0x09e6)));
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 100) : NaN;
}

function taka(minor: bigint | undefined, lang: Lang): string {
  const v = Number(minor ?? 0n) / 100;
  return digits(`৳${v.toLocaleString("en-IN", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`, lang);
}

function Counter({ lang }: { lang: Lang }) {
  const w = WORDS[lang];
  const [api] = useState(clients);
  const [report, setReport] = useState<ShiftReport>();
  const [error, setError] = useState("");
  const shiftId = report?.shift?.status === ShiftStatus.OPEN ? report.shift.shiftId : "";

  const refresh = async (id: string) => {
    try {
      const r = await api.counter.getShift({ shiftId: id });
      setReport(r.report);
      if (r.report?.shift?.status !== ShiftStatus.OPEN) localStorage.removeItem(SHIFT_KEY);
    } catch (e) {
      localStorage.removeItem(SHIFT_KEY);
      setError(sayError(e, lang));
    }
  };
  useEffect(() => {
    const id = localStorage.getItem(SHIFT_KEY);
    if (id) void refresh(id);
  }, []);

  return (
    <section class="counter" aria-labelledby="counter-title">
      <h1 id="counter-title">{w.title}</h1>
      {error && <p role="alert" class="error" id="counter-error">{error}</p>}
      {!shiftId && <OpenShift lang={lang} api={api} onOpen={(r) => { setError(""); setReport(r); }} onError={setError} />}
      {shiftId && (
        <>
          <Sell lang={lang} api={api} shiftId={shiftId} onDone={() => void refresh(shiftId)} onError={setError} />
          <Returns lang={lang} api={api} shiftId={shiftId} onDone={() => void refresh(shiftId)} onError={setError} />
          <CloseShift lang={lang} api={api} shiftId={shiftId} onClosed={(r) => { localStorage.removeItem(SHIFT_KEY); setReport(r); }}
            onError={setError} />
        </>
      )}
      {report && <Report lang={lang} report={report} />}
    </section>
  );
}

type Api = ReturnType<typeof clients>;

function OpenShift(props: { lang: Lang; api: Api; onOpen: (r: ShiftReport) => void; onError: (s: string) => void }) {
  const w = WORDS[props.lang];
  const [org, setOrg] = useState("");
  const [counter, setCounter] = useState("");
  const [float, setFloat] = useState("0");
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await props.api.counter.openShift({ organizationId: org.trim(), counterId: counter.trim(),
        openingFloat: { currency: "BDT", amountMinor: BigInt(paisa(float) || 0) } });
      const id = r.shift?.shiftId ?? "";
      localStorage.setItem(SHIFT_KEY, id);
      props.onOpen((await props.api.counter.getShift({ shiftId: id })).report!);
    } catch (err) {
      props.onError(sayError(err, props.lang));
    }
  };
  return (
    <form onSubmit={submit} aria-labelledby="counter-open-title">
      <h2 id="counter-open-title">{w.shift}</h2>
      <label>{w.org} <input id="counter-org" required value={org} onInput={(e) => setOrg((e.target as HTMLInputElement).value)} /></label>{" "}
      <label>{w.counter} <input id="counter-id" required value={counter} onInput={(e) => setCounter((e.target as HTMLInputElement).value)} /></label>{" "}
      <label>{w.float} <input id="counter-float" inputMode="decimal" value={float} onInput={(e) => setFloat((e.target as HTMLInputElement).value)} /></label>{" "}
      <button type="submit" id="counter-open">{w.open}</button>
    </form>
  );
}

/** The free seats of a seat map, in layout order (state 0 in its 2-bit availability). */
function freeSeats(m: GetSeatMapResponse): string[] {
  const out: string[] = [];
  let i = 0;
  for (const s of m.sections) {
    for (const r of s.rows) {
      for (const seat of r.seats) {
        if ((((m.availability[i >> 2] ?? 0) >> ((i & 3) * 2)) & 3) === 0) out.push(seat);
        i++;
      }
    }
  }
  return out;
}

function Sell(props: { lang: Lang; api: Api; shiftId: string; onDone: () => void; onError: (s: string) => void }) {
  const { lang, api } = props;
  const w = WORDS[lang];
  const [shows, setShows] = useState<Show[]>([]);
  const [showId, setShowId] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [boarding, setBoarding] = useState("");
  const [free, setFree] = useState<string[]>([]);
  const [seats, setSeats] = useState("");
  const [name, setName] = useState("");
  // The names of the other seats' passengers; blank, the first's.
  const [names, setNames] = useState<Record<string, string>>({});
  const [autoPrint, setAutoPrint] = useState(localStorage.getItem(AUTOPRINT_KEY) !== "0");
  const [phone, setPhone] = useState("");
  const [smsLang, setSmsLang] = useState<string>(lang);
  const [sold, setSold] = useState<SellTicketsResponse>();
  const [pdf, setPdf] = useState("");
  const show = shows.find((s) => String(s.showId) === showId);

  useEffect(() => {
    api.catalog.listShows({ forGate: true, pageSize: 200, startsFrom: { seconds: BigInt(Math.floor(Date.now() / 1000)), nanos: 0 } })
      .then((r) => setShows(r.shows), (e) => props.onError(sayError(e, lang)));
  }, []);
  const loadFree = () => {
    if (!showId) return;
    // In the shift, the seats a no-show left show free: they are the
    // counters' first (decision 0482).
    api.seatmap.getSeatMap({ showId: BigInt(showId), fromStopId: from, toStopId: to, counterShiftId: props.shiftId })
      .then((m) => setFree(freeSeats(m)), (e) => props.onError(sayError(e, lang)));
  };
  useEffect(loadFree, [showId, from, to]);

  const chosen = seats.split(/[\s,]+/).map((s) => s.trim().toUpperCase()).filter(Boolean);
  const toggle = (seat: string) =>
    setSeats((chosen.includes(seat) ? chosen.filter((s) => s !== seat) : [...chosen, seat]).join(" "));

  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await api.counter.sellTickets({
        shiftId: props.shiftId, showId: BigInt(showId), seats: chosen,
        journey: show && show.stops.length > 0 ? { fromStopId: from, toStopId: to, boardingCounterId: boarding } : undefined,
        passengers: show && show.stops.length > 0 ? chosen.map((seat) => ({ seat, name: names[seat]?.trim() || name, phone })) : [],
        contact: { phone, language: smsLang },
      });
      setSold(r);
      setPdf("");
      setSeats("");
      setName("");
      setNames({});
      setPhone("");
      props.onError("");
      loadFree();
      props.onDone();
      if (autoPrint && r.order) await print(r.order.orderId);
    } catch (err) {
      props.onError(sayError(err, lang));
    }
  };
  const print = async (orderId: string) => {
    try {
      const f = await api.counter.getCounterTicket({ orderId, language: smsLang });
      const url = URL.createObjectURL(new Blob([new Uint8Array(f.data)], { type: f.contentType }));
      setPdf(url);
      window.open(url, "_blank");
    } catch (err) {
      props.onError(sayError(err, lang));
    }
  };
  const stops = show?.stops ?? [];
  const fromStop = stops.find((s) => s.stopId === from);
  return (
    <form onSubmit={submit} aria-labelledby="sell-title">
      <h2 id="sell-title">{w.sell}</h2>
      <label>{w.trip}{" "}
        <select id="sell-show" required value={showId} onChange={(e) => { setShowId((e.target as HTMLSelectElement).value); setFrom(""); setTo(""); setBoarding(""); }}>
          <option value="">{w.choose}</option>
          {shows.map((s) => (
            <option value={String(s.showId)} key={String(s.showId)}>
              {((lang === "bn" && s.titleBn) || s.title) + " · " + showTime(s.startsAtLocal, tsDate(s.startsAt), lang)}
            </option>
          ))}
        </select>
      </label>
      {stops.length > 0 && (
        <p>
          <label>{w.from}{" "}
            <select id="sell-from" value={from} onChange={(e) => { setFrom((e.target as HTMLSelectElement).value); setBoarding(""); }}>
              <option value="">{w.choose}</option>
              {stops.slice(0, -1).map((s) => <option value={s.stopId} key={s.stopId}>{(lang === "bn" && s.placeBengali) || s.place}</option>)}
            </select>
          </label>{" "}
          <label>{w.to}{" "}
            <select id="sell-to" value={to} onChange={(e) => setTo((e.target as HTMLSelectElement).value)}>
              <option value="">{w.choose}</option>
              {stops.slice(1).map((s) => <option value={s.stopId} key={s.stopId}>{(lang === "bn" && s.placeBengali) || s.place}</option>)}
            </select>
          </label>{" "}
          {fromStop && fromStop.counters.some((c) => c.boarding) && (
            <label>{w.boarding}{" "}
              <select id="sell-boarding" value={boarding} onChange={(e) => setBoarding((e.target as HTMLSelectElement).value)}>
                <option value="">{w.none}</option>
                {fromStop.counters.filter((c) => c.boarding).map((c) => (
                  <option value={c.counterId} key={c.counterId}>{(lang === "bn" && c.nameBn) || c.name}</option>
                ))}
              </select>
            </label>
          )}
        </p>
      )}
      <label>{w.seats} <input id="sell-seats" required value={seats} autoComplete="off" onInput={(e) => setSeats((e.target as HTMLInputElement).value)} /></label>
      {free.length > 0 && (
        <p role="group" aria-label={w.free} class="counter-free" id="sell-free">
          {free.map((seat) => (
            <button type="button" key={seat} aria-pressed={chosen.includes(seat)} onClick={() => toggle(seat)}>{seat}</button>
          ))}
        </p>
      )}
      <label>{w.name} <input id="sell-name" required={stops.length > 0} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} /></label>{" "}
      {stops.length > 0 && chosen.slice(1).map((seat) => (
        <label key={seat}>{w.nameOf} {seat} ({w.sameName}){" "}
          <input id={`sell-name-${seat}`} value={names[seat] ?? ""} onInput={(e) => setNames({ ...names, [seat]: (e.target as HTMLInputElement).value })} /></label>
      ))}
      <label>{w.phone} <input id="sell-phone" required type="tel" inputMode="tel" value={phone} onInput={(e) => setPhone((e.target as HTMLInputElement).value)} /></label>{" "}
      <label>{w.language}{" "}
        <select id="sell-lang" value={smsLang} onChange={(e) => setSmsLang((e.target as HTMLSelectElement).value)}>
          <option value="bn">বাংলা</option>
          <option value="en">English</option>
        </select>
      </label>{" "}
      <label style="display:flex;flex-direction:row;gap:.5em;align-items:center">
        <input id="sell-autoprint" type="checkbox" style="width:auto" checked={autoPrint} onChange={(e) => {
          const on = (e.target as HTMLInputElement).checked;
          localStorage.setItem(AUTOPRINT_KEY, on ? "1" : "0");
          setAutoPrint(on);
        }} /> {w.autoPrint}</label>{" "}
      <button type="submit" id="sell-submit">{w.sell}</button>
      {sold?.order && (
        <p role="status" id="sell-done">
          {w.sold}: {ticketNumber(sold.order.orderId) || sold.order.orderId} · {w.total} {taka(sold.order.total?.amountMinor, lang)}{" "}
          <button type="button" id="sell-print" onClick={() => void print(sold.order!.orderId)}>{w.print}</button>
          {pdf && <a id="sell-pdf" href={pdf} target="_blank" rel="noopener">PDF</a>}
        </p>
      )}
    </form>
  );
}

function Returns(props: { lang: Lang; api: Api; shiftId: string; onDone: () => void; onError: (s: string) => void }) {
  const w = WORDS[props.lang];
  const [order, setOrder] = useState("");
  const [entry, setEntry] = useState<CashEntry>();
  const act = async (what: "refund" | "payOwed") => {
    try {
      const req = { shiftId: props.shiftId, orderId: order.trim() };
      const e = what === "refund" ? (await props.api.counter.refundTickets(req)).entry : (await props.api.counter.payOwed(req)).entry;
      setEntry(e);
      props.onError("");
      props.onDone();
    } catch (err) {
      props.onError(sayError(err, props.lang));
    }
  };
  return (
    <form onSubmit={(e) => { e.preventDefault(); void act("refund"); }} aria-labelledby="returns-title">
      <h2 id="returns-title">{w.returns}</h2>
      <label>{w.order} <input id="return-order" required value={order} onInput={(e) => setOrder((e.target as HTMLInputElement).value)} /></label>{" "}
      <button type="submit" id="return-refund">{w.refund}</button>{" "}
      <button type="button" id="return-payout" onClick={() => void act("payOwed")}>{w.payOwed}</button>
      {entry && <p role="status" id="return-done">{w.gaveBack}: {taka(-(entry.amount?.amountMinor ?? 0n), props.lang)}</p>}
    </form>
  );
}

function CloseShift(props: { lang: Lang; api: Api; shiftId: string; onClosed: (r: ShiftReport) => void; onError: (s: string) => void }) {
  const w = WORDS[props.lang];
  const [counted, setCounted] = useState("");
  const submit = async (e: Event) => {
    e.preventDefault();
    const p = paisa(counted);
    if (Number.isNaN(p)) return props.onError(w.counted);
    try {
      const r = await props.api.counter.closeShift({ shiftId: props.shiftId, countedCash: { currency: "BDT", amountMinor: BigInt(p) } });
      props.onClosed(r.report!);
    } catch (err) {
      props.onError(sayError(err, props.lang));
    }
  };
  return (
    <form onSubmit={submit} aria-labelledby="close-title">
      <h2 id="close-title">{w.close}</h2>
      <label>{w.counted} <input id="counter-counted" required inputMode="decimal" value={counted} onInput={(e) => setCounted((e.target as HTMLInputElement).value)} /></label>{" "}
      <button type="submit" id="counter-close">{w.close}</button>
    </form>
  );
}

function Report({ lang, report }: { lang: Lang; report: ShiftReport }) {
  const w = WORDS[lang];
  const sh = report.shift;
  const kind = (k: CashEntryKind) => (k === CashEntryKind.SALE ? w.sales : k === CashEntryKind.REFUND ? w.refunds : w.payouts);
  return (
    <section aria-labelledby="report-title" id="counter-report" data-status={sh?.status === ShiftStatus.OPEN ? "open" : "closed"}>
      <h2 id="report-title">{w.report}: {sh?.organizationId} · {sh?.counterId}</h2>
      <dl>
        <dt>{w.opened}</dt><dd>{tsDate(sh?.openedAt)?.toLocaleString(lang === "bn" ? "bn-BD" : "en-GB")}</dd>
        <dt>{w.sales}</dt><dd id="report-sales">{digits(String(report.sales), lang)} · {taka(report.salesTotal?.amountMinor, lang)}</dd>
        <dt>{w.refunds}</dt><dd>{digits(String(report.refunds), lang)} · {taka(report.refundsTotal?.amountMinor, lang)}</dd>
        <dt>{w.payouts}</dt><dd>{digits(String(report.payouts), lang)} · {taka(report.payoutsTotal?.amountMinor, lang)}</dd>
        <dt>{w.expected}</dt><dd id="report-expected">{taka(report.expectedCash?.amountMinor, lang)}</dd>
        <dt>{w.ledger}</dt><dd id="report-ledger">{taka(report.ledgerNet?.amountMinor, lang)}</dd>
        {report.difference && (<><dt>{w.difference}</dt><dd id="report-difference">{taka(report.difference.amountMinor, lang)}</dd></>)}
      </dl>
      <ul>
        {report.entries.map((e) => (
          <li key={e.ledgerTxnId}>{kind(e.kind)} · {ticketNumber(e.orderId) || e.orderId} · {taka(e.amount?.amountMinor, lang)}</li>
        ))}
      </ul>
    </section>
  );
}
