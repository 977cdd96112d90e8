// Find tickets by ticket number (decisions 0437, 0471): the number the
// booking's SMS names (or the order id) and the mobile number the tickets
// went to (FindTickets, public) answer the order's tickets as "my tickets"
// shows them, QR codes and all, with the PDF of the order, and "Resend
// SMS" (ResendTicketSms) for a lost SMS. For a guest after the guest's
// session ended, for an order's page (/order/<id>) opened by anyone whose
// order it is not, and for the SMS's short link (/t/<number>): there a
// signed-in buyer whose order it is goes straight to the order. A lazy
// chunk with its own words.
import { useEffect, useRef, useState } from "preact/hooks";
import { Code, ConnectError, TicketService, createServiceClient, ticketNumber } from "@seatghor/client";
import type { FindTicketsResponse, Ticket } from "@seatghor/client";

import { ErrorNote, Link, useApp } from "../app.js";
import { digits, mmss, route, showName, showTime, tsDate } from "../i18n.js";
import { durationMs, retryAt, useNow } from "../phone.js";
import { bdMobile } from "./passengers.js";
import { JourneyNote, TicketCard } from "./tickets.js";

const WORDS = {
  en: {
    title: "Find your tickets",
    intro: "Bought as a guest, or on another phone? Write the ticket number from the SMS and the mobile number the tickets were sent to.",
    order: "Ticket number",
    orderHint: "Ten letters and digits in the booking's SMS, e.g. MWTY306PTD",
    needOrder: "Write the ticket number from the SMS.",
    phone: "Mobile number",
    submit: "Find tickets",
    searching: "Looking…",
    found: (n: number) => (n === 1 ? "1 ticket found." : `${n} tickets found.`),
    notFound: "No tickets with this ticket number were sent to this number. Check both and try again.",
    pdf: "E-ticket (PDF)",
    resend: "Resend SMS",
    resent: (phone: string) => `The SMS was sent again to ${phone}.`,
    wait: (left: string) => `You can ask for the SMS again in ${left}.`,
    tryIn: (left: string) => `Try again in ${left}.`,
    account: "Have an account?",
  },
  bn: {
    title: "আপনার টিকিট খুঁজুন",
    intro: "অতিথি হিসেবে কিনেছেন, বা অন্য ফোনে? এসএমএসের টিকিট নম্বর আর যে মোবাইল নম্বরে টিকিট পাঠানো হয়েছে তা লিখুন।",
    order: "টিকিট নম্বর",
    orderHint: "বুকিংয়ের এসএমএসে দশ অক্ষর ও অঙ্কের নম্বর, যেমন MWTY306PTD",
    needOrder: "এসএমএসের টিকিট নম্বরটি লিখুন।",
    phone: "ফোন নম্বর",
    submit: "টিকিট খুঁজুন",
    searching: "খোঁজা হচ্ছে…",
    found: (n: number) => `${digits(n, "bn")}টি টিকিট পাওয়া গেছে।`,
    notFound: "এই টিকিট নম্বরের কোনো টিকিট এই নম্বরে পাঠানো হয়নি। দুটোই দেখে আবার চেষ্টা করুন।",
    pdf: "ই-টিকিট (পিডিএফ)",
    resend: "এসএমএস আবার পাঠান",
    resent: (phone: string) => `এসএমএসটি আবার ${phone} নম্বরে পাঠানো হয়েছে।`,
    wait: (left: string) => `${left} পরে আবার এসএমএস চাইতে পারবেন।`,
    tryIn: (left: string) => `${left} পরে আবার চেষ্টা করুন।`,
    account: "অ্যাকাউন্ট আছে?",
  },
} as const;

// While the order's PDF is being made, asked again this often, this many times.
const PDF_POLL_MS = 3000;
const PDF_POLLS = 20;
// A PDF link with less than this left is asked for again before it is followed.
const PDF_MARGIN_MS = 30_000;

/**
 * The tickets' client: its calls here are public, sent with no token.
 * FindTickets is a POST (not declared free of side effects: a miss is
 * counted), so the phone number travels in the body, never the address.
 */
function ticketClient() {
  return createServiceClient(TicketService, { baseUrl: location.origin });
}

/** What was asked: the ticket number and the number in E.164. */
interface Query {
  orderId: string;
  phone: string;
}

/**
 * orderId: the order or ticket number to fill in. mine: it came from the
 * SMS's short link, so a signed-in buyer's own order opens at once.
 */
export function FindPage(props: { orderId?: string; mine?: boolean }) {
  const { t, api, lang, session, go } = useApp();
  const w = WORDS[lang];
  const [client] = useState(ticketClient);
  const [orderId, setOrderId] = useState(ticketNumber(props.orderId ?? "") || (props.orderId ?? ""));
  // The short link's number among the buyer's newest tickets (the SMS
  // was sent when the order was confirmed, so it is one of them): the
  // buyer's own order opens; one only sent to their number is shown here,
  // as its page is its buyer's.
  useEffect(() => {
    const number = (props.orderId ?? "").toUpperCase();
    if (!props.mine || !session || !number) return;
    api.tickets
      .listMyTickets({ pageSize: 100 })
      .then((r) => {
        const o = r.tickets.find((x) => ticketNumber(x.orderId) === number && x.userId === session.userId);
        if (o) go(`/order/${o.orderId}`, true);
      })
      .catch(() => {}); // the form is there to fill in
  }, [props.orderId, props.mine, session]);
  const [phone, setPhone] = useState("");
  const [found, setFound] = useState<{ q: Query; r: FindTicketsResponse }>();
  // The fields at fault, by id, with what to say.
  const [bad, setBad] = useState<Record<string, string>>({});
  const [missed, setMissed] = useState(false);
  const [err, setErr] = useState<unknown>();
  const [until, setUntil] = useState(0);
  const [busy, setBusy] = useState(false);
  const now = useNow(until);
  // Each answer asked for; an older one that comes late is dropped.
  const asked = useRef(0);

  async function find(q: Query, quiet = false): Promise<FindTicketsResponse | undefined> {
    const n = ++asked.current;
    if (!quiet) {
      setBusy(true);
      setErr(undefined);
      setMissed(false);
    }
    try {
      const r = await client.findTickets({ orderId: q.orderId, phone: q.phone, lang });
      if (n === asked.current) setFound({ q, r });
      return r;
    } catch (e) {
      if (n !== asked.current || quiet) return undefined;
      setFound(undefined);
      if (e instanceof ConnectError && e.code === Code.NotFound) setMissed(true);
      else {
        setErr(e);
        setUntil(retryAt(e));
      }
      return undefined;
    } finally {
      if (!quiet && n === asked.current) setBusy(false);
    }
  }

  function submit(e: Event) {
    e.preventDefault();
    const q = { orderId: orderId.trim(), phone: bdMobile(phone) ?? "" };
    const problems: Record<string, string> = {};
    if (!q.orderId) problems["find-order"] = w.needOrder;
    if (!q.phone) problems["find-phone"] = t.badPhone;
    setBad(problems);
    const first = Object.keys(problems)[0];
    if (first) {
      document.getElementById(first)?.focus();
      return;
    }
    void find(q);
  }

  // The PDF in the page's language, and while it is being made, again
  // until it is ready.
  const q = found?.q;
  const preparing = !!found?.r.download && !found.r.download.ready;
  useEffect(() => {
    if (q) void find(q, true);
  }, [lang]);
  useEffect(() => {
    if (!q || !preparing) return;
    let left = PDF_POLLS;
    const timer = setInterval(() => {
      if (--left <= 0) clearInterval(timer);
      void find(q, true);
    }, PDF_POLL_MS);
    return () => clearInterval(timer);
  }, [q, preparing]);

  const field = (id: string) => ({
    id,
    "aria-invalid": bad[id] ? ("true" as const) : undefined,
    "aria-describedby": [id === "find-order" && "find-order-hint", bad[id] && `${id}-err`].filter(Boolean).join(" ") || undefined,
  });
  return (
    <>
      <h1 tabIndex={-1}>{w.title}</h1>
      <p class="note">{w.intro}</p>
      <form class="find" id="find-form" noValidate onSubmit={submit}>
        <label>
          {w.order}
          <input {...field("find-order")} value={orderId} required maxLength={64} autocomplete="off" spellcheck={false}
            autocapitalize="none" translate={false} onInput={(e) => setOrderId(e.currentTarget.value)} />
        </label>
        <p class="hint" id="find-order-hint">{w.orderHint}</p>
        {bad["find-order"] && <p class="error" id="find-order-err">{bad["find-order"]}</p>}
        <label>
          {w.phone}
          <input {...field("find-phone")} type="tel" inputMode="tel" autocomplete="tel" required maxLength={20} value={phone}
            onInput={(e) => setPhone(e.currentTarget.value)} />
        </label>
        {bad["find-phone"] && <p class="error" id="find-phone-err">{bad["find-phone"]}</p>}
        <button type="submit" class="primary" id="find-submit" disabled={busy}>
          {busy ? w.searching : w.submit}
        </button>
      </form>
      {!session && (
        <p>
          {w.account} <Link href={`/signin?next=${encodeURIComponent(location.pathname + location.search)}`}>{t.signIn}</Link>
        </p>
      )}
      <p class="live" role="status" aria-live="polite" id="find-status">
        {found && w.found(found.r.tickets.length)}
      </p>
      {missed && (
        <p class="note error" role="alert" id="find-missed">
          {w.notFound}
        </p>
      )}
      <ErrorNote err={err} />
      {until > now && (
        <p class="note" role="timer">
          {w.tryIn(mmss((until - now) / 1000, lang))}
        </p>
      )}
      {found && found.r.tickets.length > 0 && (
        <FoundOrder q={found.q} r={found.r} again={() => find(found.q, true)} key={found.q.orderId} />
      )}
    </>
  );
}

/** The order found: its show, its PDF, its tickets with their QR codes, and "Resend SMS". */
function FoundOrder(props: { q: Query; r: FindTicketsResponse; again: () => Promise<FindTicketsResponse | undefined> }) {
  const { t, lang } = useApp();
  const first: Ticket = props.r.tickets[0];
  const d = props.r.download;
  return (
    <section class="order" id="found" data-order={first.orderId} aria-label={`${t.ticketNumber} ${ticketNumber(first.orderId)}`}>
      <h2>{showName(first.showTitle, first, lang)}</h2>
      <p class="meta">
        {route(first, lang)} · {showTime(first.startsAtLocal, tsDate(first.startsAt), lang)}
      </p>
      {first.journey && <JourneyNote j={first.journey} />}
      <p class="ref">
        <small>
          {t.ticketNumber} <span class="id" translate={false}>{ticketNumber(first.orderId)}</span>
        </small>
      </p>
      {d && (
        <div class="pdf">
          {d.ready ? (
            <a
              class="button primary"
              href={d.url}
              download={d.fileName}
              id="find-pdf"
              data-pdf
              onClick={(e) => {
                // A presigned link that ran out meanwhile (a phone asleep):
                // asked for again first.
                if ((tsDate(d.expiresAt)?.getTime() ?? 0) - Date.now() > PDF_MARGIN_MS) return;
                e.preventDefault();
                void props.again().then((r) => r?.download?.ready && location.assign(r.download.url));
              }}
            >
              {WORDS[lang].pdf}
            </a>
          ) : (
            <button type="button" disabled>
              {t.pdfPreparing}
            </button>
          )}
        </div>
      )}
      <ul class="tickets">
        {props.r.tickets.map((x) => (
          <TicketCard key={x.ticketId} ticket={x} />
        ))}
      </ul>
      <Resend q={props.q} />
    </section>
  );
}

/** "Resend SMS": the booking's SMS again to its number, and when it may be asked for again. */
function Resend({ q }: { q: Query }) {
  const { lang } = useApp();
  const w = WORDS[lang];
  const [client] = useState(ticketClient);
  const [sentTo, setSentTo] = useState("");
  const [until, setUntil] = useState(0);
  const [err, setErr] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const now = useNow(until);
  const waiting = until > now;

  async function resend() {
    setBusy(true);
    setErr(undefined);
    try {
      const r = await client.resendTicketSms({ orderId: q.orderId, phone: q.phone });
      setSentTo(r.phone);
      setUntil(Date.now() + durationMs(r.resendAfter));
    } catch (e) {
      setErr(e);
      setUntil(retryAt(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="resend">
      <button type="button" id="find-resend" disabled={busy || waiting} onClick={() => void resend()}>
        {w.resend}
      </button>
      <p class="live" role="status" aria-live="polite" id="find-resent">
        {sentTo && w.resent(digits(sentTo, lang))}
      </p>
      {waiting && (
        <p class="note" role="timer" id="find-resend-wait">
          {w.wait(mmss((until - now) / 1000, lang))}
        </p>
      )}
      <ErrorNote err={err} />
    </div>
  );
}
