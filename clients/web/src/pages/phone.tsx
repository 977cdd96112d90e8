// Sign-in by mobile number (decision 0436), on the sign-in page when the
// server sends SMS: the number, "Send code" (SendCode, the SMS in the
// page's language), then the six digits of the SMS (VerifyCode), and the
// buyer is signed in and goes on. A lazy chunk with its own words: most
// visitors never sign in here.
import { useRef, useState } from "preact/hooks";
import { InvalidRequestError } from "@seatghor/client";

import { ErrorNote, useApp } from "../app.js";
import { digits, mmss } from "../i18n.js";
import { saveSession } from "../session.js";
import { bdMobile } from "./passengers.js";
import { durationMs, phoneClient, retryAt, useNow } from "../phone.js";

// A guest's start (the shell's "Continue as guest") loads with this chunk:
// one lazy entry, so the shell's code stays one chunk of the first load.
export { startGuest } from "../phone.js";

const WORDS = {
  en: {
    title: "Sign in with your mobile number",
    phone: "Mobile number",
    phoneHint: "A Bangladeshi mobile, e.g. 01711-234567. We send a 6-digit code to it by SMS.",
    send: "Send code",
    sendAgain: "Send the code again",
    sent: (phone: string, min: string) => `A code was sent to ${phone} by SMS. It works for ${min} minutes.`,
    wait: (left: string) => `You can ask for another code in ${left}.`,
    code: "Code from the SMS",
    needCode: "Write the 6 digits of the SMS.",
    badCode: "That code is not right, or it has expired. Check the SMS, or ask for a new code.",
    verify: "Sign in",
  },
  bn: {
    title: "মোবাইল নম্বর দিয়ে সাইন ইন",
    phone: "ফোন নম্বর",
    phoneHint: "বাংলাদেশের মোবাইল নম্বর, যেমন ০১৭১১-২৩৪৫৬৭। এই নম্বরে এসএমএসে ৬ অঙ্কের একটি কোড পাঠানো হবে।",
    send: "কোড পাঠান",
    sendAgain: "কোড আবার পাঠান",
    sent: (phone: string, min: string) => `${phone} নম্বরে এসএমএসে একটি কোড পাঠানো হয়েছে। কোডটি ${min} মিনিট কাজ করবে।`,
    wait: (left: string) => `${left} পরে আবার কোড চাইতে পারবেন।`,
    code: "এসএমএসের কোড",
    needCode: "এসএমএসের ৬টি অঙ্ক লিখুন।",
    badCode: "কোডটি ঠিক নয়, বা এর মেয়াদ শেষ। এসএমএস দেখে নিন, নয়তো নতুন কোড চান।",
    verify: "সাইন ইন",
  },
} as const;

/** A code sent: to which number (E.164), for how long, and when another may be asked for. */
interface Sent {
  phone: string;
  minutes: number;
  again: number; // ms since the epoch
}

export function PhoneSignIn(props: { next: string }) {
  const { t, lang, setSession, go } = useApp();
  const w = WORDS[lang];
  const [client] = useState(phoneClient);
  const [phone, setPhone] = useState("");
  const [code, setCode] = useState("");
  const [sent, setSent] = useState<Sent>();
  // When the number may be sent a code again after a refusal for too many tries.
  const [limited, setLimited] = useState({ phone: "", until: 0 });
  const [phoneErr, setPhoneErr] = useState("");
  const [codeErr, setCodeErr] = useState("");
  const [err, setErr] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const codeInput = useRef<HTMLInputElement>(null);
  const phoneInput = useRef<HTMLInputElement>(null);

  const number = bdMobile(phone);
  // The code's step is the number's the code was sent to.
  const asked = sent && sent.phone === number ? sent : undefined;
  const until = Math.max(asked?.again ?? 0, limited.phone === number ? limited.until : 0);
  const now = useNow(until);
  const waiting = until > now;

  async function send(e: Event) {
    e.preventDefault();
    setErr(undefined);
    if (!number) {
      setPhoneErr(t.badPhone);
      phoneInput.current?.focus();
      return;
    }
    setPhoneErr("");
    setBusy(true);
    try {
      const r = await client.sendCode({ phone: number, language: lang });
      setSent({ phone: r.phone, minutes: Math.round(durationMs(r.expiresIn) / 60_000), again: Date.now() + durationMs(r.resendAfter) });
      setCode("");
      setCodeErr("");
      requestAnimationFrame(() => codeInput.current?.focus());
    } catch (x) {
      setLimited({ phone: number, until: retryAt(x) });
      setErr(x);
    } finally {
      setBusy(false);
    }
  }

  async function verify(e: Event) {
    e.preventDefault();
    if (!asked) return;
    setErr(undefined);
    if (!/\S/.test(code)) {
      setCodeErr(w.needCode);
      codeInput.current?.focus();
      return;
    }
    setCodeErr("");
    setBusy(true);
    try {
      const r = await client.verifyCode({ phone: asked.phone, code: code.trim() });
      const s = saveSession(r.token);
      if (!s) throw new Error("phone sign-in: the token cannot be read");
      setSession(s);
      go(props.next, true);
    } catch (x) {
      setBusy(false);
      // A wrong or expired code is said at the field; anything else
      // (locked after too many, the network) below the form.
      if (x instanceof InvalidRequestError && x.field("code")) {
        setCodeErr(w.badCode);
        codeInput.current?.focus();
        return;
      }
      setErr(x);
    }
  }

  return (
    <section class="phone-signin" aria-labelledby="phone-title">
      <h2 id="phone-title">{w.title}</h2>
      <form id="phone-form" noValidate onSubmit={(e) => void send(e)}>
        <label>
          {w.phone}
          <input id="phone-number" ref={phoneInput} type="tel" inputMode="tel" autocomplete="tel" required maxLength={20}
            value={phone} aria-invalid={phoneErr ? "true" : undefined}
            aria-describedby={`phone-hint${phoneErr ? " phone-err" : ""}`}
            onInput={(e) => setPhone(e.currentTarget.value)} />
        </label>
        <p class="hint" id="phone-hint">{w.phoneHint}</p>
        {phoneErr && <p class="error" id="phone-err">{phoneErr}</p>}
        <button type="submit" id="phone-send" class={asked ? undefined : "primary"} disabled={busy || waiting}>
          {asked ? w.sendAgain : w.send}
        </button>
        {waiting && (
          <p class="note" id="phone-wait" role="timer">
            {w.wait(mmss((until - now) / 1000, lang))}
          </p>
        )}
      </form>
      <p class="live" role="status" aria-live="polite" id="phone-sent">
        {asked && w.sent(digits(asked.phone, lang), digits(asked.minutes, lang))}
      </p>
      {asked && (
        <form id="phone-code-form" noValidate onSubmit={(e) => void verify(e)}>
          <label>
            {w.code}
            <input id="phone-code" ref={codeInput} inputMode="numeric" autocomplete="one-time-code" required maxLength={20}
              value={code} aria-invalid={codeErr ? "true" : undefined} aria-describedby={codeErr ? "phone-code-err" : undefined}
              onInput={(e) => setCode(e.currentTarget.value)} />
          </label>
          {codeErr && <p class="error" id="phone-code-err">{codeErr}</p>}
          <button type="submit" class="primary" id="phone-verify" disabled={busy}>
            {w.verify}
          </button>
        </form>
      )}
      <ErrorNote err={err} />
    </section>
  );
}
