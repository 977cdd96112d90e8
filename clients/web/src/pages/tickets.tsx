// "My tickets": the buyer's live holds and unpaid orders with their time
// left, a way to pay and to release (decision 0301); each ticket with its
// QR code on screen; per order one link to the PDF of the whole order, kept
// fresh while the page is open (the URL is presigned for a few minutes),
// and the cancellation, with the fee and the refund shown before the buyer
// confirms (the fee rounds down, as the server's does).
import { useEffect, useRef, useState } from "preact/hooks";
import { HoldStatus, OrderStatus, TicketStatus } from "@seatghor/client";
import type { Hold, Journey, Order, Show, Ticket } from "@seatghor/client";

import { ErrorNote, Link, NeedSession, useApp } from "../app.js";
import { digits, mmss, taka, tsDate, showTime, route, showName, when } from "../i18n.js";
import { savePdf, savedPdf } from "../offline.js";
import { SAVED_AT_HEADER } from "../saved.js";
import { isGuest } from "../session.js";
import type { Strings } from "../i18n.js";

const POLL_MS = 1500;
// The PDF's link is a presigned URL that lasts a few minutes: it is asked
// for again when less than PDF_MARGIN_MS is left, checked every
// PDF_CHECK_MS and whenever the page is shown again (decision 0305).
const PDF_MARGIN_MS = 60_000;
const PDF_CHECK_MS = 5_000;

export function TicketsPage() {
  const { t, session } = useApp();
  return (
    <>
      <NeedSession>
        <TicketsInner />
      </NeedSession>
      {/* Bought as a guest, or signed in elsewhere: found by ticket number. */}
      {!session && (
        <p>
          <Link href="/find" id="find-link">{t.findByNumber}</Link>
        </p>
      )}
    </>
  );
}

function statusText(t: Strings, s: TicketStatus): string {
  switch (s) {
    case TicketStatus.CHECKED_IN:
      return t.status.checkedIn;
    case TicketStatus.CANCELLED:
      return t.status.cancelled;
    case TicketStatus.REFUNDED:
      return t.status.refunded;
    default:
      return t.status.valid;
  }
}

function TicketsInner() {
  const { t, api, lang } = useApp();
  const [tickets, setTickets] = useState<Ticket[]>();
  const [err, setErr] = useState<unknown>();
  const [gen, setGen] = useState(0);
  // When the answer came from the copy on this phone (the service worker
  // answers offline with it, decision 0398): when that copy was made.
  const [savedAt, setSavedAt] = useState("");

  // The read model follows the payment within a moment: poll until there
  // are tickets and their PDFs are ready.
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () =>
      api.tickets
        .listMyTickets({ pageSize: 100 }, { onHeader: (h) => setSavedAt(h.get(SAVED_AT_HEADER) ?? "") })
        .then((r) => {
          if (stopped) return;
          setErr(undefined);
          setTickets(r.tickets);
          if (r.tickets.length === 0 || r.tickets.some((x) => !x.downloadReady && x.status === TicketStatus.VALID)) {
            timer = setTimeout(load, POLL_MS);
          }
        })
        .catch(setErr);
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [gen]);

  const orders = new Map<string, Ticket[]>();
  for (const x of tickets ?? []) orders.set(x.orderId, [...(orders.get(x.orderId) ?? []), x]);
  return (
    <>
      <h1 tabIndex={-1}>{t.tickets}</h1>
      {savedAt && (
        <p class="note warn" id="saved-copy" role="status">
          {t.savedCopy(when(new Date(savedAt), lang))}
        </p>
      )}
      <LiveHolds />
      <ErrorNote err={err} />
      {!tickets ? (
        <p>{t.loading}</p>
      ) : tickets.length === 0 ? (
        <p class="note" role="status">
          {t.noTickets}
        </p>
      ) : (
        [...orders].map(([orderId, list]) => (
          <OrderTickets key={orderId} orderId={orderId} tickets={list} onChange={() => setGen(gen + 1)} />
        ))
      )}
    </>
  );
}

function OrderTickets(props: { orderId: string; tickets: Ticket[]; onChange: () => void }) {
  const { t, lang } = useApp();
  const first = props.tickets[0];
  return (
    <section class="order" aria-label={`${t.order} ${props.orderId}`}>
      <h2>{showName(first.showTitle, first, lang)}</h2>
      <p class="meta">
        {route(first, lang)} · {showTime(first.startsAtLocal, tsDate(first.startsAt), lang)}
      </p>
      {first.journey && <JourneyNote j={first.journey} />}
      <OrderPdf tickets={props.tickets} />
      <ul class="tickets">
        {props.tickets.map((x) => (
          <TicketCard key={x.ticketId} ticket={x} />
        ))}
      </ul>
      <Cancel orderId={props.orderId} cancellable={props.tickets.some((x) => x.status === TicketStatus.VALID)} onDone={props.onChange} />
    </section>
  );
}

/** A trip with stops (decision 0384): the order's journey, where and when
 * to board (the counter's time, else the coach's at the stop) and where
 * it drops, names in the UI's language. */
export function JourneyNote({ j }: { j: Journey }) {
  const { t, lang } = useApp();
  const bn = lang === "bn";
  const from = (bn && j.fromNameBn) || j.fromName;
  const to = (bn && j.toNameBn) || j.toName;
  const board = (bn && j.boardingCounterNameBn) || j.boardingCounterName;
  const drop = (bn && j.droppingCounterNameBn) || j.droppingCounterName;
  const at = j.boardingCounterId ? showTime(j.boardingAtLocal, tsDate(j.boardingAt), lang) : showTime(j.departsAtLocal, tsDate(j.departsAt), lang);
  return (
    <p class="meta journey">
      <strong>
        {from} → {to}
      </strong>
      {` · ${t.boards}: ${at}`}
      {board && ` · ${board}`}
      {drop && ` · ${t.dropsAt}: ${drop}`}
    </p>
  );
}

// LiveHolds lists the buyer's live holds of every show (ListMyHolds): a
// hold not yet ordered and an unpaid order (an ordered hold), each with
// its time left, Pay (on to the order page) and Release (the hold given
// back, or the unpaid order cancelled).
function LiveHolds() {
  const { t, api, lang, go, session } = useApp();
  const [holds, setHolds] = useState<Hold[]>([]);
  const [shows, setShows] = useState(new Map<bigint, Show>());
  const [now, setNow] = useState(Date.now());
  const [busy, setBusy] = useState(false);
  const [msg, setMsg] = useState("");
  const [err, setErr] = useState<unknown>();

  async function load() {
    const r = await api.holds.listMyHolds({});
    const ids = [...new Set(r.holds.map((h) => h.showId))].filter((id) => !shows.has(id));
    const got = await Promise.all(ids.map((showId) => api.catalog.getShow({ showId })));
    if (got.length) setShows((m) => new Map([...m, ...got.map((g) => [g.show!.showId, g.show!] as const)]));
    setHolds(r.holds);
    setNow(Date.now());
  }
  useEffect(() => {
    // Offline, the live holds are not known (they change by the minute):
    // the saved tickets below are what the page is for then.
    load().catch((e) => navigator.onLine && setErr(e));
  }, []);

  useEffect(() => {
    if (holds.length === 0) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [holds.length > 0]);

  async function pay(h: Hold) {
    if (h.status === HoldStatus.ORDERED) {
      go(`/order/${h.orderId}`);
      return;
    }
    // A guest's order needs the number the tickets go to: the show's page
    // asks for it (or its passengers page).
    if (isGuest(session)) {
      go(`/show/${h.showId}`);
      return;
    }
    setBusy(true);
    setErr(undefined);
    try {
      const r = await api.orders.createOrder({ holdId: h.holdId });
      go(`/order/${r.order!.orderId}`);
    } catch (e) {
      setErr(e);
      setBusy(false);
    }
  }

  async function release(h: Hold) {
    setBusy(true);
    setErr(undefined);
    setMsg("");
    try {
      if (h.status === HoldStatus.ORDERED) await api.orders.cancelOrder({ orderId: h.orderId });
      else await api.holds.releaseHold({ holdId: h.holdId });
      setMsg(t.released);
      await load();
    } catch (e) {
      setErr(e);
    } finally {
      setBusy(false);
    }
  }

  const live = holds.filter((h) => (tsDate(h.expiresAt)?.getTime() ?? 0) > now);
  return (
    <section class="holds" id="holds" aria-label={t.liveHolds}>
      <p class="live" role="status" aria-live="polite">
        {msg}
      </p>
      <ErrorNote err={err} />
      {live.length > 0 && (
        <>
          <h2>{t.liveHolds}</h2>
          <ul>
            {live.map((h) => {
              const show = shows.get(h.showId);
              const left = mmss(((tsDate(h.expiresAt)?.getTime() ?? 0) - now) / 1000, lang);
              return (
                <li class="live-hold" key={h.holdId} data-hold={h.holdId} data-order={h.orderId || undefined}>
                  <p>
                    <strong>{show && showName(show.title, show, lang)}</strong>
                    {show && ` · ${route(show, lang)} · ${showTime(show.startsAtLocal, tsDate(show.startsAt), lang)}`}
                  </p>
                  <p>
                    {h.seats.length > 0 ? h.seats.join(", ") : `${h.gaArea} × ${digits(h.quantity, lang)}`} ·{" "}
                    {h.amount && taka(h.amount.amountMinor, lang)}
                  </p>
                  <p class="left" role="timer">
                    {h.status === HoldStatus.ORDERED ? t.unpaidLeft(left) : t.holdLeft(left)}
                  </p>
                  <button type="button" class="primary pay-now" disabled={busy} onClick={() => void pay(h)}>
                    {t.pay}
                  </button>{" "}
                  <button type="button" class="release" disabled={busy} onClick={() => void release(h)}>
                    {t.release}
                  </button>
                </li>
              );
            })}
          </ul>
        </>
      )}
    </section>
  );
}

// The QR library loads with the first ticket shown, not with the site.
const qr = () => import("../qr.js");

function QR(props: { code: string; label: string }) {
  const [svg, setSvg] = useState("");
  useEffect(() => {
    void qr().then((m) => setSvg(m.qrSvg(props.code)));
  }, [props.code]);
  return <div class="qr" role="img" aria-label={props.label} dangerouslySetInnerHTML={{ __html: svg }} />;
}

/** A presigned link to an order's PDF, and when it stops working. */
interface PdfLink {
  url: string;
  fileName: string;
  expires: number; // ms since the epoch
}

/**
 * One tap to the PDF of the whole order (every ticket of it is in the one
 * file, named for the order). The link is there before the tap and asked
 * for again before it expires, so it works however long the page stays
 * open; a tap on a link that ran out meanwhile (a phone asleep) asks first.
 */
function OrderPdf(props: { tickets: Ticket[] }) {
  const { t, api, lang, session } = useApp();
  const orderId = props.tickets[0].orderId;
  const good = props.tickets.find((x) => x.status === TicketStatus.VALID || x.status === TicketStatus.CHECKED_IN);
  const ready = props.tickets.some((x) => x.downloadReady);
  const [link, setLink] = useState<PdfLink>();
  const [err, setErr] = useState<unknown>();
  const current = useRef<PdfLink>();

  async function ask(): Promise<PdfLink | undefined> {
    if (!good) return undefined;
    const user = session?.userId ?? "";
    try {
      const r = await api.tickets.getTicketDownload({ ticketId: good.ticketId, lang });
      if (!r.ready) return undefined; // the next check asks again
      const l = { url: r.url, fileName: r.fileName, expires: tsDate(r.expiresAt)?.getTime() ?? 0 };
      current.current = l;
      setLink(l);
      setErr(undefined);
      // A copy for offline, once per order and language (decision 0398).
      void savePdf(user, orderId, lang, r.url);
      return l;
    } catch (e) {
      // Offline: the copy kept on this phone, if there is one; it does
      // not expire.
      const kept = !navigator.onLine && (await savedPdf(user, orderId, lang));
      if (kept) {
        const l = { url: kept, fileName: `seatghor-${orderId}${lang === "bn" ? "-bn" : ""}.pdf`, expires: Infinity };
        current.current = l;
        setLink(l);
        setErr(undefined);
        return l;
      }
      setErr(e);
      return undefined;
    }
  }
  const stale = () => !current.current || current.current.expires - Date.now() < PDF_MARGIN_MS;

  useEffect(() => {
    if (!good || !ready) return;
    current.current = undefined;
    setLink(undefined);
    void ask();
    const check = () => {
      if (!document.hidden && stale()) void ask();
    };
    const timer = setInterval(check, PDF_CHECK_MS);
    document.addEventListener("visibilitychange", check);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", check);
    };
  }, [good?.ticketId, ready, lang]);

  if (!good) return null;
  const n = digits(props.tickets.filter((x) => x.status === TicketStatus.VALID || x.status === TicketStatus.CHECKED_IN).length, lang);
  return (
    <div class="pdf">
      {link ? (
        <a
          class="button primary"
          href={link.url}
          download={link.fileName}
          data-pdf
          data-saved={link.expires === Infinity || undefined}
          onClick={(e) => {
            if (!stale()) return;
            e.preventDefault();
            void ask().then((l) => l && location.assign(l.url));
          }}
        >
          {t.orderPdf(n)}
        </a>
      ) : (
        <button type="button" disabled>
          {t.pdfPreparing}
        </button>
      )}
      <ErrorNote err={err} />
    </div>
  );
}

export function TicketCard({ ticket }: { ticket: Ticket }) {
  const { t, lang } = useApp();
  const where = ticket.seats.length ? ticket.seats.join(", ") : ticket.seat || ticket.gaArea;
  return (
    <li class={`ticket st${ticket.status}`} data-ticket={ticket.ticketId} data-ticket-id={ticket.ticketId}>
      <QR code={ticket.code} label={`${t.showQR}: ${where}`} />
      <div class="info">
        <p class="seatno">
          {t.seat}: <strong>{where}</strong>
        </p>
        {ticket.passenger?.name && (
          <p class="passenger">
            {t.passengerLabel}: {ticket.passenger.name}
          </p>
        )}
        <p>{ticket.price && taka(ticket.price.amountMinor, lang)}</p>
        <p class="status">{statusText(t, ticket.status)}</p>
        <p class="code">
          <small class="id" translate={false}>{ticket.ticketId}</small>
        </p>
        {ticket.checkedInAt && <p>{digits(showTime(ticket.checkedInAtLocal, tsDate(ticket.checkedInAt), lang), lang)}</p>}
      </div>
    </li>
  );
}

function Cancel(props: { orderId: string; cancellable: boolean; onDone: () => void }) {
  const { t, api, lang } = useApp();
  const [terms, setTerms] = useState<{ order: Order; fee: bigint; bps: number }>();
  const [done, setDone] = useState<Order>();
  const [err, setErr] = useState<unknown>();

  async function ask() {
    setErr(undefined);
    try {
      const { order } = await api.orders.getOrder({ orderId: props.orderId });
      const { show } = await api.catalog.getShow({ showId: order!.showId });
      // A show moved after the order was paid refunds it in full (decision 0477).
      const bps = order!.movedAt ? 0 : (show?.cancellationFeeBps ?? 0);
      const total = order!.total?.amountMinor ?? 0n;
      setTerms({ order: order!, fee: (total * BigInt(bps)) / 10000n, bps });
    } catch (e) {
      setErr(e);
    }
  }

  async function confirm() {
    try {
      const r = await api.orders.cancelOrder({ orderId: props.orderId });
      setDone(r.order);
      setTerms(undefined);
      props.onDone();
    } catch (e) {
      setErr(e);
    }
  }

  if (done) {
    const refund = (done.total?.amountMinor ?? 0n) - (done.cancellationFee?.amountMinor ?? 0n);
    return (
      <p role="status" class="note">
        {t.cancelled(taka(refund, lang))}
      </p>
    );
  }
  if (!props.cancellable) return null;
  const total = terms?.order.total?.amountMinor ?? 0n;
  const pct = terms ? `${Math.floor(terms.bps / 100)}${terms.bps % 100 ? "." + String(terms.bps % 100).padStart(2, "0") : ""}` : "";
  return (
    <div class="cancel">
      <ErrorNote err={err} />
      {!terms ? (
        <button type="button" class="danger-outline" onClick={ask}>
          {t.cancelOrder}
        </button>
      ) : terms.order.status !== OrderStatus.CONFIRMED ? null : (
        <div role="alertdialog" aria-label={t.cancelOrder} class="confirm">
          <p id={`terms-${props.orderId}`}>
            {terms.order.movedAt ? t.cancelMoved(taka(total, lang)) : t.cancelTerms(taka(total - terms.fee, lang), taka(terms.fee, lang), digits(pct, lang))}
          </p>
          <button type="button" class="danger" onClick={confirm} aria-describedby={`terms-${props.orderId}`} autoFocus>
            {t.cancelConfirm}
          </button>{" "}
          <button type="button" onClick={() => setTerms(undefined)}>
            {t.keepOrder}
          </button>
        </div>
      )}
    </div>
  );
}
