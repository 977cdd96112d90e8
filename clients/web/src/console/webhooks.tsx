// A partner's webhook endpoint in the console (decision 0461): its
// delivery log, newest first and filtered by status, each delivery with
// its attempts' last answer, sent again on request (ReplayDeliveries, the
// same webhook-id), read again every few seconds while it is open; every
// event of a time range sent again at once (decision 0475), as after a
// partner's outage; and a disabled endpoint enabled again. Admins, as the
// API allows them.
import { useEffect, useState } from "preact/hooks";
import { DeliveryStatus, WebhookService } from "@seatghor/client";
import type { WebhookDelivery, WebhookEndpoint, createServiceClient } from "@seatghor/client";

import { digits, showTime, tsDate } from "../i18n.js";
import type { Lang } from "../i18n.js";
import { sayError } from "../say.js";
import { dhakaLocal, dhakaTimestamp } from "./dhaka.js";

type Webhooks = ReturnType<typeof createServiceClient<typeof WebhookService>>;

const WORDS = {
  en: {
    of: "Deliveries to", none: "Nothing delivered yet.", only: "Show", all: "every delivery",
    statuses: ["", "waiting to be tried again", "delivered", "failed for three days", "dropped"],
    occurred: "Event at", event: "Event", status: "Status", attempts: "Attempts", last: "Last answer",
    replay: "Send again", replayed: "Sent again", older: "Older deliveries", close: "Close", next: "next try",
    noAnswer: "no answer yet", rangeTitle: "Send again every event between", since: "From", until: "until",
    replayRange: "Send these again", rangeSent: (n: number) => (n === 1 ? "1 delivery sent again." : `${n} deliveries sent again.`),
  },
  bn: {
    of: "পাঠানোর খতিয়ান:", none: "এখনো কিছু পাঠানো হয়নি।", only: "দেখান", all: "সব",
    statuses: ["", "আবার চেষ্টার অপেক্ষায়", "পৌঁছেছে", "তিন দিন ধরে ব্যর্থ", "বাদ পড়েছে"],
    occurred: "ঘটনার সময়", event: "ঘটনা", status: "অবস্থা", attempts: "চেষ্টা", last: "শেষ উত্তর",
    replay: "আবার পাঠান", replayed: "আবার পাঠানো হলো", older: "আরও পুরোনো", close: "বন্ধ", next: "পরের চেষ্টা",
    noAnswer: "এখনো উত্তর নেই", rangeTitle: "এই সময়ের সব ঘটনা আবার পাঠান", since: "শুরু", until: "শেষ",
    replayRange: "এগুলো আবার পাঠান", rangeSent: (n: number) => `${digits(n, "bn")}টি আবার পাঠানো হলো।`,
  },
} as const;

/** The API's few words for a failed attempt (DeliveryAttempt.error), in Bengali. */
const ERRORS_BN: Record<string, string> = {
  "destination refused": "এই ঠিকানায় পাঠানো যায় না", "connection failed": "সংযোগ হয়নি",
  "timed out": "সময়মতো উত্তর আসেনি", "not sent: internal error": "পাঠানো হয়নি: ভেতরের ত্রুটি",
};

/** How often an open log is read again: a replay's outcome shows by itself. */
const REFRESH_MS = 4000;

export function EndpointDeliveries(props: { lang: Lang; api: Webhooks; endpoint: WebhookEndpoint; onClose: () => void;
  onError: (s: string) => void }) {
  const { lang, api, endpoint, onError } = props;
  const w = WORDS[lang];
  const [status, setStatus] = useState(DeliveryStatus.UNSPECIFIED);
  const [list, setList] = useState<WebhookDelivery[]>();
  const [next, setNext] = useState("");
  const [paged, setPaged] = useState(false);
  const [sent, setSent] = useState("");
  // A range of events to send again: the last hour, to the next minute.
  const [range, setRange] = useState(() => {
    const now = BigInt(Math.floor(Date.now() / 60_000) * 60 + 60);
    return { since: dhakaLocal({ seconds: now - 3600n }), until: dhakaLocal({ seconds: now }) };
  });
  const [rangeSent, setRangeSent] = useState<number>();
  const read = async (pageToken: string) => {
    try {
      const r = await api.listDeliveries({ endpointId: endpoint.endpointId, status, pageSize: 50, pageToken });
      setList((cur) => (pageToken ? [...(cur ?? []), ...r.deliveries] : r.deliveries));
      setNext(r.nextPageToken);
      setPaged(pageToken !== "");
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  useEffect(() => void read(""), [status]);
  // The first page follows the log; older pages, once read, stay put.
  useEffect(() => {
    if (paged) return;
    const t = setInterval(() => void read(""), REFRESH_MS);
    return () => clearInterval(t);
  }, [status, paged]);
  const replay = async (d: WebhookDelivery) => {
    onError("");
    try {
      await api.replayDeliveries({ endpointId: endpoint.endpointId, which: { case: "eventId", value: d.eventId } });
      setSent(d.eventId);
      await read("");
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  const replayRange = async (e: Event) => {
    e.preventDefault();
    onError("");
    setRangeSent(undefined);
    try {
      const r = await api.replayDeliveries({ endpointId: endpoint.endpointId,
        which: { case: "range", value: { since: dhakaTimestamp(range.since), until: dhakaTimestamp(range.until) } } });
      setRangeSent(r.replayed);
      await read("");
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  return (
    <section class="console-sales" id="endpoint-deliveries" aria-labelledby="deliveries-title">
      <h3 id="deliveries-title">{w.of} {endpoint.url}</h3>
      <button type="button" id="deliveries-close" onClick={props.onClose}>{w.close}</button>{" "}
      <label>{w.only}{" "}
        <select id="deliveries-status" style="width:auto" value={status} onChange={(e) => setStatus(Number((e.target as HTMLSelectElement).value) as DeliveryStatus)}>
          {[DeliveryStatus.UNSPECIFIED, DeliveryStatus.PENDING, DeliveryStatus.SUCCEEDED, DeliveryStatus.FAILED, DeliveryStatus.DROPPED].map((s) => (
            <option key={s} value={s}>{s === DeliveryStatus.UNSPECIFIED ? w.all : w.statuses[s]}</option>
          ))}
        </select>
      </label>
      {sent && <p role="status" id="deliveries-replayed">{w.replayed}: <code>{sent}</code></p>}
      <form id="replay-range-form" onSubmit={replayRange}>
        <fieldset>
          <legend>{w.rangeTitle}</legend>
          <label>{w.since} <input id="replay-since" type="datetime-local" required value={range.since}
            onInput={(e) => setRange({ ...range, since: (e.target as HTMLInputElement).value })} /></label>{" "}
          <label>{w.until} <input id="replay-until" type="datetime-local" required value={range.until}
            onInput={(e) => setRange({ ...range, until: (e.target as HTMLInputElement).value })} /></label>{" "}
          <button type="submit" id="replay-range">{w.replayRange}</button>
        </fieldset>
      </form>
      {rangeSent !== undefined && <p role="status" id="range-replayed">{w.rangeSent(rangeSent)}</p>}
      {list?.length === 0 && <p class="note" id="deliveries-none">{w.none}</p>}
      {list && list.length > 0 && (
        <table class="console-table" id="deliveries">
          <thead><tr><th scope="col">{w.occurred}</th><th scope="col">{w.event}</th><th scope="col">{w.status}</th>
            <th scope="col">{w.attempts}</th><th scope="col">{w.last}</th><th scope="col" /></tr></thead>
          <tbody>
            {list.map((d) => (
              <tr key={String(d.deliveryId)} id={`delivery-${d.deliveryId}`} data-webhook-id={d.webhookId}>
                <td>{showTime(undefined, tsDate(d.occurredAt), lang)}</td>
                <th scope="row"><code>{d.eventType}</code></th>
                <td class="status">{w.statuses[d.status] ?? ""}
                  {d.status === DeliveryStatus.PENDING && d.nextAttemptAt && ` · ${w.next} ${showTime(undefined, tsDate(d.nextAttemptAt), lang)}`}
                  {d.status === DeliveryStatus.DROPPED && d.droppedReason && ` · ${d.droppedReason}`}</td>
                <td>{digits(d.attempts, lang)}</td>
                <td class="answer">{lastAnswer(d, lang) || w.noAnswer}</td>
                <td><button type="button" id={`replay-${d.deliveryId}`} aria-label={`${w.replay}: ${d.eventType} ${d.eventId}`}
                  onClick={() => void replay(d)}>{w.replay}</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && <button type="button" id="deliveries-more" onClick={() => void read(next)}>{w.older}</button>}
    </section>
  );
}

/** The newest attempt: its error (the API's own words) or its HTTP status, and how long it took. */
function lastAnswer(d: WebhookDelivery, lang: Lang): string {
  const a = d.recentAttempts[0];
  if (!a) return "";
  const ms = a.duration ? Number(a.duration.seconds) * 1000 + Math.round(a.duration.nanos / 1e6) : 0;
  const said = a.error || `HTTP ${a.statusCode}`;
  return lang === "bn" ? `${ERRORS_BN[said] ?? said} · ${digits(ms, lang)} মি.সে.` : `${said} · ${ms} ms`;
}
