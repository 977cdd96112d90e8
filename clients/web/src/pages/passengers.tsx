// Who travels: between a bus trip's hold and its order, one passenger per
// held seat, name and mobile number (decision 0380). A seat for women's
// passenger is declared a woman at the hold; here it says so and stays so.
// Checked in the page as the API checks it (a name; a Bangladeshi mobile
// number in any common spelling, decision 0382) and again by the API,
// whose refusals land on the field they name ("passengers[1].phone").
// The order's contact (Contact, which the show page asks for too when its
// order skips this page): a guest (decision 0437) must give the number the
// tickets are sent to and found by; anyone may give an e-mail address for
// the tickets, and a buyer with an account a number for the SMS (decision
// 0472). The messages come in the page's language.
import { useEffect, useRef, useState } from "preact/hooks";
import { HoldStatus, InvalidRequestError } from "@seatghor/client";
import type { Hold, Show } from "@seatghor/client";

import { ErrorNote, NeedSession, useApp } from "../app.js";
import { digits, mmss, route, showName, showTime, tsDate } from "../i18n.js";
import type { Lang } from "../i18n.js";
import { isGuest } from "../session.js";

/** The operators' digits after 01 (decision 0382). */
const OPERATORS = "3456789";

/**
 * s as a Bangladeshi mobile number in E.164 ("+8801711234567"), or
 * undefined when it is not one: server/phone's rule, for the page to say
 * so before asking.
 */
export function bdMobile(s: string): string | undefined {
  let plus = false;
  let d = "";
  for (const ch of s.trim()) {
    if (ch >= "0" && ch <= "9") d += ch;
    else if (ch >= "০" && ch <= "৯") d += String(ch.charCodeAt(0) - 0x09e6);
    else if (ch === "+" && !plus && d === "") plus = true;
    else if (!("-.()/".includes(ch) || /\s/.test(ch))) return undefined;
  }
  if (plus && !d.startsWith("880")) return undefined;
  if (d.startsWith("00880")) d = d.slice(5);
  else if (d.startsWith("880")) d = d.slice(3);
  if (d.length === 11 && d[0] === "0") d = d.slice(1);
  if (d.length !== 10 || d[0] !== "1" || !OPERATORS.includes(d[1])) return undefined;
  return "+880" + d;
}

/** The ids of the contact's fields (Contact). */
export const CONTACT_PHONE = "contact-phone";
export const CONTACT_EMAIL = "contact-email";

/** The contact as typed. */
export interface Typed {
  phone: string;
  email: string;
}

/**
 * The order's contact at checkout: the mobile number (a guest's is
 * required, as the tickets are sent to it by SMS and found by it with the
 * ticket number; a buyer with an account may give one) and an e-mail
 * address for the tickets, optional. bad: what to say of each field, by id.
 */
export function Contact(props: { guest: boolean; value: Typed; set: (v: Typed) => void; bad: Record<string, string> }) {
  const { t } = useApp();
  const field = (id: string, note: string) => ({
    id,
    "aria-invalid": props.bad[id] ? ("true" as const) : undefined,
    "aria-describedby": [note, props.bad[id] && `${id}-err`].filter(Boolean).join(" "),
  });
  return (
    <div class="contact">
      <label>
        {props.guest ? t.contactPhone : t.contactPhoneOptional}
        <input {...field(CONTACT_PHONE, "contact-note")} type="tel" inputMode="tel" autocomplete="tel" required={props.guest}
          maxLength={20} value={props.value.phone} onInput={(e) => props.set({ ...props.value, phone: e.currentTarget.value })} />
      </label>
      <p class="hint" id="contact-note">{t.contactNote}</p>
      {props.bad[CONTACT_PHONE] && <p class="error" id={`${CONTACT_PHONE}-err`}>{props.bad[CONTACT_PHONE]}</p>}
      <label>
        {t.contactEmail}
        <input {...field(CONTACT_EMAIL, "")} type="email" inputMode="email" autocomplete="email" maxLength={254}
          spellcheck={false} autocapitalize="none" value={props.value.email}
          onInput={(e) => props.set({ ...props.value, email: e.currentTarget.value })} />
      </label>
      {props.bad[CONTACT_EMAIL] && <p class="error" id={`${CONTACT_EMAIL}-err`}>{props.bad[CONTACT_EMAIL]}</p>}
    </div>
  );
}

/** What is wrong with a contact as typed, by field id (the API checks it again). */
export function contactProblems(guest: boolean, c: Typed, t: { badPhone: string; badEmail: string }): Record<string, string> {
  const found: Record<string, string> = {};
  if ((guest || c.phone.trim()) && !bdMobile(c.phone)) found[CONTACT_PHONE] = t.badPhone;
  if (c.email.trim() && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(c.email.trim())) found[CONTACT_EMAIL] = t.badEmail;
  return found;
}

/** The order's contact: what was typed, and the page's language for the messages. */
export function checkoutContact(c: Typed, lang: Lang) {
  return { phone: c.phone.trim() ? (bdMobile(c.phone) ?? c.phone) : "", email: c.email.trim(), language: lang };
}

/** What the page says of a name, or "" when it is one (server: cleanName). */
function nameProblem(name: string): "" | "missing" | "long" {
  const n = name.trim().replace(/\s+/g, " ");
  if (!n || !/\p{L}/u.test(n)) return "missing";
  return [...n].length > 100 ? "long" : "";
}

interface Row {
  seat: string;
  name: string;
  phone: string;
  woman: boolean;
}

/** The field of the form a refusal names, e.g. "p1-phone". */
function fieldOf(path: string): string | undefined {
  if (path === "contact.phone") return CONTACT_PHONE;
  if (path === "contact.email") return CONTACT_EMAIL;
  const m = /^passengers\[(\d+)\]\.(name|phone|seat)$/.exec(path);
  if (!m) return undefined;
  return `p${m[1]}-${m[2] === "seat" ? "name" : m[2]}`;
}

export function PassengersPage(props: { holdId: string }) {
  return (
    <NeedSession guest>
      <PassengersInner holdId={props.holdId} />
    </NeedSession>
  );
}

function PassengersInner({ holdId }: { holdId: string }) {
  const { t, api, lang, go, session } = useApp();
  const guest = isGuest(session);
  const [hold, setHold] = useState<Hold>();
  const [show, setShow] = useState<Show>();
  const [rows, setRows] = useState<Row[]>([]);
  const [contact, setContact] = useState<Typed>({ phone: "", email: "" });
  // The fields at fault, by id, with what to say.
  const [bad, setBad] = useState<Record<string, string>>({});
  const [err, setErr] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [now, setNow] = useState(Date.now());
  const summary = useRef<HTMLParagraphElement>(null);

  useEffect(() => {
    api.holds
      .getHold({ holdId })
      .then(async (r) => {
        const h = r.hold!;
        // Ordered already (another tab): on to its order.
        if (h.status === HoldStatus.ORDERED) {
          go(`/order/${h.orderId}`, true);
          return;
        }
        setHold(h);
        setRows(h.seats.map((seat) => ({ seat, name: "", phone: "", woman: h.womenSeats.includes(seat) })));
        setShow((await api.catalog.getShow({ showId: h.showId })).show);
      })
      .catch(setErr);
    const tick = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(tick);
  }, [holdId]);

  function set(i: number, change: Partial<Row>) {
    setRows((cur) => cur.map((r, k) => (k === i ? { ...r, ...change } : r)));
  }

  function check(): Record<string, string> {
    const found: Record<string, string> = {};
    rows.forEach((r, i) => {
      const n = nameProblem(r.name);
      if (n) found[`p${i}-name`] = n === "long" ? t.nameTooLong : t.needName;
      if (!bdMobile(r.phone)) found[`p${i}-phone`] = t.badPhone;
    });
    return { ...found, ...contactProblems(guest, contact, t) };
  }

  function showProblems(found: Record<string, string>) {
    setBad(found);
    const first = Object.keys(found)[0];
    // The summary is read out (role=alert); the first field takes the focus.
    requestAnimationFrame(() => (first ? document.getElementById(first)?.focus() : summary.current?.focus()));
  }

  async function submit(e: Event) {
    e.preventDefault();
    setErr(undefined);
    const found = check();
    if (Object.keys(found).length > 0) {
      showProblems(found);
      return;
    }
    setBad({});
    setBusy(true);
    try {
      const r = await api.orders.createOrder({
        holdId,
        passengers: rows.map((p) => ({ seat: p.seat, name: p.name.trim(), phone: p.phone, woman: p.woman })),
        contact: checkoutContact(contact, lang),
      });
      go(`/order/${r.order!.orderId}`);
    } catch (x) {
      setBusy(false);
      if (x instanceof InvalidRequestError) {
        const said: Record<string, string> = {};
        for (const v of x.fieldViolations) {
          const id = fieldOf(v.field);
          if (id) said[id] = id === CONTACT_EMAIL ? t.badEmail : id.endsWith("phone") ? t.badPhone : t.needName;
        }
        if (Object.keys(said).length > 0) {
          showProblems(said);
          return;
        }
      }
      // Ordered meanwhile in another tab: on to that order.
      const h = await api.holds.getHold({ holdId }).then((r) => r.hold, () => undefined);
      if (h?.status === HoldStatus.ORDERED) {
        go(`/order/${h.orderId}`);
        return;
      }
      setErr(x);
    }
  }

  if (!hold || !show) {
    return (
      <>
        <ErrorNote err={err} />
        {!err && <p>{t.loading}</p>}
      </>
    );
  }
  const left = ((tsDate(hold.expiresAt)?.getTime() ?? 0) - now) / 1000;
  const problems = Object.keys(bad).length;
  return (
    <>
      <h1 tabIndex={-1}>{t.passengersTitle}</h1>
      <p class="meta">
        {showName(show.title, show, lang)} · {route(show, lang)} · {showTime(show.startsAtLocal, tsDate(show.startsAt), lang)}
      </p>
      <p>
        {t.heldFor} <strong role="timer">{mmss(left, lang)}</strong>
      </p>
      <p class="note">{t.passengersNote}</p>
      <form class="passengers" id="passengers" noValidate onSubmit={(e) => void submit(e)}>
        {problems > 0 && (
          <p class="note error" role="alert" id="passengers-problems" tabIndex={-1} ref={summary}>
            {t.fixBelow(digits(problems, lang))}
          </p>
        )}
        {rows.map((r, i) => {
          const nameErr = bad[`p${i}-name`];
          const phoneErr = bad[`p${i}-phone`];
          return (
            <fieldset class="passenger" key={r.seat} data-seat={r.seat}>
              <legend>{t.passengerOf(r.seat)}</legend>
              <label>
                {t.passengerName}
                <input id={`p${i}-name`} value={r.name} maxLength={100} required autocomplete={i === 0 ? "name" : "off"}
                  aria-invalid={nameErr ? "true" : undefined} aria-describedby={nameErr ? `p${i}-name-err` : undefined}
                  onInput={(e) => set(i, { name: e.currentTarget.value })} />
              </label>
              {nameErr && <p class="error" id={`p${i}-name-err`}>{nameErr}</p>}
              <label>
                {t.passengerPhone}
                <input id={`p${i}-phone`} type="tel" inputMode="tel" value={r.phone} maxLength={20} required
                  autocomplete={i === 0 ? "tel" : "off"} aria-invalid={phoneErr ? "true" : undefined}
                  aria-describedby={`p${i}-phone-hint${phoneErr ? ` p${i}-phone-err` : ""}`}
                  onInput={(e) => set(i, { phone: e.currentTarget.value })} />
              </label>
              <p class="hint" id={`p${i}-phone-hint`}>{t.passengerPhoneHint}</p>
              {phoneErr && <p class="error" id={`p${i}-phone-err`}>{phoneErr}</p>}
              {hold.womenSeats.includes(r.seat) ? (
                <p class="women" id={`p${i}-woman`}>{t.passengerWomanSeat}</p>
              ) : (
                <label class="check">
                  <input type="checkbox" id={`p${i}-woman`} checked={r.woman}
                    onChange={(e) => set(i, { woman: e.currentTarget.checked })} />
                  {t.passengerWoman}
                </label>
              )}
            </fieldset>
          );
        })}
        <Contact guest={guest} value={contact} bad={bad} set={(v) => {
          setContact(v);
          // The contact's words go once it is edited; the passengers' stay until the next try.
          setBad(({ [CONTACT_PHONE]: _p, [CONTACT_EMAIL]: _e, ...rest }) => rest);
        }} />
        <ErrorNote err={err} />
        <button type="submit" class="primary" id="to-pay" disabled={busy || left <= 0}>
          {t.continueToPay}
        </button>
      </form>
    </>
  );
}
