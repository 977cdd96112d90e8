// The operator's console (issue 26, decision 0446), a bundle of its own
// (assets/console.js) that only /console loads. An organisation's
// managers (and admins) run it from here: its shows, with their seat maps,
// manifests and cancellation; its staff, added, changed and removed by
// user id; and its audit log, searched by show, user and action. Gate and
// counter staff who open it are shown the pages their role has. Every
// call is the API's, which refuses what the caller may not do whatever
// this page shows (tested through the API).
import { useEffect, useRef, useState } from "preact/hooks";
import { render } from "preact";
import { CatalogService, LedgerService, OrganizationRole, SalesChannel, ShowStatus, createServiceClient } from "@seatghor/client";
import type { AuditEntry, GetShowSalesResponse, OrganizationAccess, OrganizationMember, Show } from "@seatghor/client";
import uPlot from "uplot";

import { SHOW_ZONE, digits, showTime, taka, tsDate } from "../i18n.js";
import type { Lang } from "../i18n.js";
import { sayError } from "../say.js";
import "../staffreasons.js";
import { loadSession } from "../session.js";

const WORDS = {
  en: {
    title: "Console", org: "Organisation", none: "You run no organisation. An admin adds you to one as its manager.",
    yourRole: "Your role here", yourPages: "Your pages", gatePage: "Gate", counterPage: "Counter",
    shows: "Shows", staff: "Staff", audit: "Audit log", when: "Starts", seats: "Seats", status: "Status",
    seatMap: "Seat map", manifest: "Manifest", cancel: "Cancel show", cancelReason: "Reason (told to every buyer)",
    cancelConfirm: "Cancel it and refund every buyer in full", noShows: "No shows yet.",
    user: "User id", role: "Role", added: "Since", add: "Add or change", remove: "Remove", you: "you",
    action: "Action", allActions: "Every action", target: "About (e.g. show:12)", by: "By (user id)", search: "Search",
    at: "When", change: "Change", older: "Older entries", noEntries: "No entries.",
    sales: "Sales", salesOf: "Sales of", sold: "Sold", held: "Held", places: "Places", channel: "Channel", orders: "Orders",
    amount: "Amount", taken: "Sales", refunds: "Refunds", commission: "Commission", operatorShare: "Your share",
    overTime: "Sales over time", barWidth: "Bar", perMinute: "a minute", perHour: "an hour", perDay: "a day",
    close: "Close", updated: "Updated", section: "Section",
    channels: { web: "Web", partner: "Partner", counter: "Counter" },
    roles: { manager: "Manager", gate: "Gate staff", counter: "Counter staff", none: "Admin" },
    statuses: { scheduled: "On sale", delayed: "Delayed", boarding: "Boarding", departed: "Started", arrived: "Arrived", cancelled: "Cancelled" },
    actions: {
      "organization.create": "Organisation created", "member.set": "Staff role given", "member.remove": "Staff removed",
      "show.create": "Show created", "show.cancel": "Show cancelled", "show.reschedule": "Show moved",
      "show.withdraw": "Show withdrawn", "route.create": "Route created", "route.update": "Route changed",
      "timetable.create": "Timetable created", "timetable.update": "Timetable changed",
      "counter_shift.open": "Counter shift opened", "counter_shift.close": "Counter shift closed",
    } as Record<string, string>,
    kinds: { "member.": "Staff", "show.": "Shows", "route.": "Routes", "timetable.": "Timetables", "counter_shift.": "Counter shifts",
      "organization.": "Organisation" } as Record<string, string>,
  },
  bn: {
    title: "কনসোল", org: "সংস্থা", none: "আপনি কোনো সংস্থা চালান না। একজন অ্যাডমিন আপনাকে কোনো সংস্থার ম্যানেজার করবেন।",
    yourRole: "এখানে আপনার ভূমিকা", yourPages: "আপনার পাতা", gatePage: "গেট", counterPage: "কাউন্টার",
    shows: "শো", staff: "কর্মী", audit: "অডিট লগ", when: "শুরু", seats: "আসন", status: "অবস্থা",
    seatMap: "আসন-নকশা", manifest: "যাত্রী তালিকা", cancel: "শো বাতিল", cancelReason: "কারণ (প্রত্যেক ক্রেতাকে জানানো হবে)",
    cancelConfirm: "বাতিল করুন, প্রত্যেক ক্রেতাকে পুরো টাকা ফেরত", noShows: "এখনো কোনো শো নেই।",
    user: "ব্যবহারকারীর আইডি", role: "ভূমিকা", added: "কবে থেকে", add: "যোগ বা বদল", remove: "বাদ দিন", you: "আপনি",
    action: "কাজ", allActions: "সব কাজ", target: "কী নিয়ে (যেমন show:12)", by: "কে (ব্যবহারকারীর আইডি)", search: "খুঁজুন",
    at: "কখন", change: "বদল", older: "আগের এন্ট্রি", noEntries: "কোনো এন্ট্রি নেই।",
    sales: "বিক্রি", salesOf: "বিক্রি:", sold: "বিক্রি হয়েছে", held: "ধরে রাখা", places: "আসন", channel: "মাধ্যম", orders: "অর্ডার",
    amount: "টাকা", taken: "বিক্রি", refunds: "ফেরত", commission: "কমিশন", operatorShare: "আপনার অংশ",
    overTime: "সময় ধরে বিক্রি", barWidth: "প্রতি দাগ", perMinute: "এক মিনিট", perHour: "এক ঘণ্টা", perDay: "এক দিন",
    close: "বন্ধ", updated: "হালনাগাদ", section: "অংশ",
    channels: { web: "ওয়েব", partner: "পার্টনার", counter: "কাউন্টার" },
    roles: { manager: "ম্যানেজার", gate: "গেট কর্মী", counter: "কাউন্টার কর্মী", none: "অ্যাডমিন" },
    statuses: { scheduled: "বিক্রি চলছে", delayed: "দেরি", boarding: "যাত্রী উঠছে", departed: "শুরু হয়েছে", arrived: "পৌঁছেছে", cancelled: "বাতিল" },
    actions: {
      "organization.create": "সংস্থা তৈরি", "member.set": "কর্মীর ভূমিকা দেওয়া", "member.remove": "কর্মী বাদ",
      "show.create": "শো তৈরি", "show.cancel": "শো বাতিল", "show.reschedule": "শোর সময় বদল",
      "show.withdraw": "শো প্রত্যাহার", "route.create": "রুট তৈরি", "route.update": "রুট বদল",
      "timetable.create": "সময়সূচি তৈরি", "timetable.update": "সময়সূচি বদল",
      "counter_shift.open": "কাউন্টার শিফট শুরু", "counter_shift.close": "কাউন্টার শিফট শেষ",
    } as Record<string, string>,
    kinds: { "member.": "কর্মী", "show.": "শো", "route.": "রুট", "timetable.": "সময়সূচি", "counter_shift.": "কাউন্টার শিফট",
      "organization.": "সংস্থা" } as Record<string, string>,
  },
} as const;

type Words = (typeof WORDS)[Lang];
type Tab = "shows" | "staff" | "audit";
const TABS: Tab[] = ["shows", "staff", "audit"];

/** The roles a member may be given, as the API names them. */
const ROLES = [OrganizationRole.MANAGER, OrganizationRole.COUNTER, OrganizationRole.GATE];

function roleWord(w: Words, r: OrganizationRole | string): string {
  switch (r) {
    case OrganizationRole.MANAGER: case "manager": return w.roles.manager;
    case OrganizationRole.GATE: case "gate": return w.roles.gate;
    case OrganizationRole.COUNTER: case "counter": return w.roles.counter;
    default: return w.roles.none;
  }
}

/** The services the console calls, as the signed-in operator. */
function clients() {
  const options = { baseUrl: location.origin, token: () => loadSession()?.token };
  return { catalog: createServiceClient(CatalogService, options), ledger: createServiceClient(LedgerService, options) };
}
type Api = ReturnType<typeof clients>;

/**
 * Renders the console into el; returns what unmounts it. The console
 * keeps where it is in the address (/console/<organisation>/<tab>) and
 * reads it from there when mounted, so a reload, a shared link or a change
 * of language opens the same organisation and tab.
 */
export function mount(el: HTMLElement, props: { lang: Lang }): () => void {
  render(<Console lang={props.lang} />, el);
  return () => render(null, el);
}

function Console({ lang }: { lang: Lang }) {
  const w = WORDS[lang];
  const [path] = useState(() => location.pathname.split("/").filter(Boolean).slice(1).map(decodeURIComponent));
  const [api] = useState(clients);
  const [orgs, setOrgs] = useState<OrganizationAccess[]>();
  const [org, setOrg] = useState(path[0] ?? "");
  const [tab, setTab] = useState<Tab>(TABS.includes(path[1] as Tab) ? (path[1] as Tab) : "shows");
  const [error, setError] = useState("");
  const admin = loadSession()?.role === "admin";

  useEffect(() => {
    api.catalog.listOrganizations({}).then((r) => {
      setOrgs(r.organizations);
      if (!r.organizations.some((a) => a.organization?.organizationId === org)) {
        setOrg(r.organizations[0]?.organization?.organizationId ?? "");
      }
    }, (e) => setError(sayError(e, lang)));
  }, []);
  useEffect(() => {
    if (org) history.replaceState(history.state, "", `/console/${encodeURIComponent(org)}/${tab}`);
  }, [org, tab]);

  const access = orgs?.find((a) => a.organization?.organizationId === org);
  const runs = admin || access?.role === OrganizationRole.MANAGER;
  const named = (a: OrganizationAccess) => (lang === "bn" && a.organization?.nameBn) || a.organization?.name || "";
  return (
    <section class="console" aria-labelledby="console-title">
      <h1 id="console-title">{w.title}</h1>
      {error && <p role="alert" class="error" id="console-error">{error}</p>}
      {orgs && orgs.length === 0 && <p class="note" id="console-none">{w.none}</p>}
      {orgs && orgs.length > 0 && (
        <label>{w.org}{" "}
          <select id="console-org" value={org} onChange={(e) => { setError(""); setOrg((e.target as HTMLSelectElement).value); }}>
            {orgs.map((a) => <option key={a.organization?.organizationId} value={a.organization?.organizationId}>{named(a)}</option>)}
          </select>
        </label>
      )}
      {access && !runs && (
        <div id="console-role">
          <p>{w.yourRole}: <strong>{roleWord(w, access.role)}</strong></p>
          <p>{w.yourPages}: <a href="/gate">{w.gatePage}</a>
            {access.role === OrganizationRole.COUNTER && <>{" · "}<a href="/counter">{w.counterPage}</a></>}</p>
        </div>
      )}
      {access && runs && (
        <>
          <nav class="tabs" aria-label={w.title}>
            {TABS.map((t) => (
              <button type="button" key={t} id={`tab-${t}`} aria-pressed={tab === t} onClick={() => { setError(""); setTab(t); }}>{w[t]}</button>
            ))}
          </nav>
          {tab === "shows" && <Shows key={org} lang={lang} api={api} org={org} onError={setError} />}
          {tab === "staff" && <Staff key={org} lang={lang} api={api} org={org} onError={setError} />}
          {tab === "audit" && <Audit key={org} lang={lang} api={api} org={org} onError={setError} />}
        </>
      )}
    </section>
  );
}

interface PartProps { lang: Lang; api: Api; org: string; onError: (s: string) => void }

function statusKey(s: Show): keyof Words["statuses"] {
  switch (s.status) {
    case ShowStatus.DELAYED: return "delayed";
    case ShowStatus.BOARDING: return "boarding";
    case ShowStatus.DEPARTED: return "departed";
    case ShowStatus.ARRIVED: return "arrived";
    case ShowStatus.CANCELLED: return "cancelled";
    default: return "scheduled";
  }
}

/** The organisation's shows, soonest first, with what a manager does to each. */
function Shows({ lang, api, org, onError }: PartProps) {
  const w = WORDS[lang];
  const [shows, setShows] = useState<Show[]>();
  const [cancelling, setCancelling] = useState<bigint>();
  const [watching, setWatching] = useState<Show>();
  const [reason, setReason] = useState("");
  const load = () => api.catalog.listShows({ organizationId: org, pageSize: 200 }).then((r) => setShows(r.shows), (e) => onError(sayError(e, lang)));
  useEffect(() => void load(), []);
  const cancel = async (e: Event) => {
    e.preventDefault();
    try {
      await api.catalog.cancelShow({ showId: cancelling!, reason: reason.trim() });
      setCancelling(undefined);
      setReason("");
      await load();
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  if (!shows) return null;
  if (shows.length === 0) return <p class="note">{w.noShows}</p>;
  const title = (s: Show) => (lang === "bn" && s.titleBn) || s.title;
  return (
    <>
    {watching && <Sales key={String(watching.showId)} lang={lang} api={api} show={watching} title={title(watching)}
      onClose={() => setWatching(undefined)} onError={onError} />}
    <table class="console-table" id="console-shows">
      <caption>{w.shows}</caption>
      <thead><tr><th scope="col">{w.shows}</th><th scope="col">{w.when}</th><th scope="col">{w.seats}</th><th scope="col">{w.status}</th><th scope="col" /></tr></thead>
      <tbody>
        {shows.map((s) => (
          <tr key={String(s.showId)} id={`show-${s.showId}`}>
            <th scope="row">{title(s)}</th>
            <td>{showTime(s.startsAtLocal, tsDate(s.startsAt), lang)}</td>
            <td>{digits(String(s.seatCount), lang)}</td>
            <td class="status">{w.statuses[statusKey(s)]}</td>
            <td>
              <button type="button" id={`sales-${s.showId}`} onClick={() => setWatching(s)}>{w.sales}</button>{" · "}
              <a href={`/show/${s.showId}`}>{w.seatMap}</a>{" · "}<a href={`/manifest/${s.showId}`}>{w.manifest}</a>
              {s.status !== ShowStatus.CANCELLED && cancelling !== s.showId && (
                <>{" · "}<button type="button" class="danger" id={`cancel-${s.showId}`} onClick={() => setCancelling(s.showId)}>{w.cancel}</button></>
              )}
              {cancelling === s.showId && (
                <form onSubmit={cancel} class="inline">
                  <label>{w.cancelReason} <input id="cancel-reason" required maxLength={500} value={reason}
                    onInput={(e) => setReason((e.target as HTMLInputElement).value)} /></label>{" "}
                  <button type="submit" class="danger" id="cancel-confirm">{w.cancelConfirm}</button>
                </form>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
    </>
  );
}

const CHANNEL_KEYS: Record<number, "web" | "partner" | "counter"> = {
  [SalesChannel.WEB]: "web", [SalesChannel.PARTNER]: "partner", [SalesChannel.COUNTER]: "counter",
};

/** The widths a bar of the timeline may have, in seconds. */
const BARS = { perMinute: 60n, perHour: 3600n, perDay: 86400n } as const;

/**
 * A show's live sales (decision 0447): read every 5 seconds while open,
 * the places sold and held by section, orders by channel, the money from
 * the ledger and a chart of sales over time (uPlot, in this bundle only),
 * whose numbers are also a table for screen readers.
 */
function Sales(props: { lang: Lang; api: Api; show: Show; title: string; onClose: () => void; onError: (s: string) => void }) {
  const { lang, api, show } = props;
  const w = WORDS[lang];
  const [bar, setBar] = useState<keyof typeof BARS>("perHour");
  const [sales, setSales] = useState<GetShowSalesResponse>();
  useEffect(() => {
    let live = true;
    const read = () => api.ledger.getShowSales({ showId: show.showId, bucket: { seconds: BARS[bar], nanos: 0 } })
      .then((r) => { if (live) setSales(r); }, (e) => props.onError(sayError(e, lang)));
    void read();
    const every = setInterval(() => { if (!document.hidden) void read(); }, 5000);
    return () => { live = false; clearInterval(every); };
  }, [bar]);
  const m = sales?.money;
  return (
    <section class="console-sales" id="console-sales" aria-labelledby="sales-title" aria-live="polite" aria-busy={!sales}>
      <h2 id="sales-title">{w.salesOf} {props.title}</h2>
      <button type="button" id="sales-close" onClick={props.onClose}>{w.close}</button>
      {sales && (
        <>
          <p class="note" id="sales-asof">{w.updated}: {showTime(undefined, tsDate(sales.asOf), lang)}</p>
          <dl class="console-money" id="sales-money">
            <dt>{w.taken}</dt><dd id="sales-taken">{taka(m?.salesMinor ?? 0n, lang)}</dd>
            <dt>{w.refunds}</dt><dd id="sales-refunds">{taka(m?.refundsMinor ?? 0n, lang)}</dd>
            <dt>{w.commission}</dt><dd id="sales-commission">{taka(m?.commissionMinor ?? 0n, lang)}</dd>
            <dt>{w.operatorShare}</dt><dd id="sales-operator">{taka(m?.operatorMinor ?? 0n, lang)}</dd>
          </dl>
          <table class="console-table" id="sales-sections">
            <caption>{w.places}</caption>
            <thead><tr><th scope="col">{w.section}</th><th scope="col">{w.sold}</th><th scope="col">{w.held}</th><th scope="col">{w.places}</th></tr></thead>
            <tbody>
              {sales.sections.map((x) => (
                <tr key={x.section}>
                  <th scope="row">{x.section}</th>
                  <td>{digits(x.sold, lang)} ({digits(x.places ? Math.round((100 * x.sold) / x.places) : 0, lang)}%)</td>
                  <td>{digits(x.held, lang)}</td><td>{digits(x.places, lang)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <table class="console-table" id="sales-channels">
            <caption>{w.channel}</caption>
            <thead><tr><th scope="col">{w.channel}</th><th scope="col">{w.orders}</th><th scope="col">{w.amount}</th></tr></thead>
            <tbody>
              {sales.channels.map((c) => (
                <tr key={c.channel} data-channel={CHANNEL_KEYS[c.channel]}>
                  <th scope="row">{w.channels[CHANNEL_KEYS[c.channel] ?? "web"]}</th>
                  <td>{digits(c.orders, lang)}</td><td>{taka(c.amountMinor, lang)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <label>{w.barWidth}{" "}
            <select id="sales-bar" value={bar} onChange={(e) => setBar((e.target as HTMLSelectElement).value as keyof typeof BARS)}>
              {(Object.keys(BARS) as (keyof typeof BARS)[]).map((k) => <option key={k} value={k}>{w[k]}</option>)}
            </select>
          </label>
          <Timeline lang={lang} sales={sales} label={w.overTime} />
        </>
      )}
    </section>
  );
}

/** The timeline as bars (uPlot on a canvas) and, for screen readers, a table. */
function Timeline(props: { lang: Lang; sales: GetShowSalesResponse; label: string }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot>();
  const w = WORDS[props.lang];
  const xs = props.sales.timeline.map((b) => Number(b.start?.seconds ?? 0n));
  const ys = props.sales.timeline.map((b) => Number(b.amountMinor) / 100);
  useEffect(() => {
    if (!el.current) return;
    const width = Math.min(640, el.current.clientWidth || 320);
    if (!plot.current) {
      plot.current = new uPlot({
        width, height: 200, legend: { show: false },
        // The axis in Bangladesh time, as every time the console shows.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), SHOW_ZONE),
        series: [{}, { label: w.amount, fill: "rgba(11, 94, 66, 0.35)", stroke: "#0b5e42", paths: uPlot.paths.bars!({ size: [0.8, 40] }) }],
        axes: [{}, { values: (_u, vals) => vals.map((v) => digits(v.toLocaleString("en-IN"), props.lang)) }],
      }, [xs, ys], el.current);
    } else {
      plot.current.setData([xs, ys]);
    }
  }, [props.sales]);
  useEffect(() => () => plot.current?.destroy(), []);
  return (
    <figure class="console-chart">
      <figcaption id="sales-chart-title">{props.label}</figcaption>
      <div ref={el} id="sales-chart" role="img" aria-labelledby="sales-chart-title" />
      <table class="visually-hidden" id="sales-timeline">
        <caption>{props.label}</caption>
        <thead><tr><th scope="col">{w.at}</th><th scope="col">{w.orders}</th><th scope="col">{w.amount}</th></tr></thead>
        <tbody>
          {props.sales.timeline.map((b) => (
            <tr key={String(b.start?.seconds)}>
              <td>{showTime(undefined, tsDate(b.start), props.lang)}</td><td>{digits(b.orders, props.lang)}</td><td>{taka(b.amountMinor, props.lang)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

/** The organisation's members: each one's role changed or removed, new ones added by user id. */
function Staff({ lang, api, org, onError }: PartProps) {
  const w = WORDS[lang];
  const me = loadSession()?.userId;
  const [members, setMembers] = useState<OrganizationMember[]>();
  const [user, setUser] = useState("");
  const [role, setRole] = useState(OrganizationRole.GATE);
  const load = () => api.catalog.listOrganizationMembers({ organizationId: org }).then((r) => setMembers(r.members), (e) => onError(sayError(e, lang)));
  useEffect(() => void load(), []);
  const act = async (call: () => Promise<unknown>) => {
    onError("");
    try {
      await call();
      await load();
      return true;
    } catch (err) {
      onError(sayError(err, lang));
      return false;
    }
  };
  const add = async (e: Event) => {
    e.preventDefault();
    if (await act(() => api.catalog.addOrganizationMember({ organizationId: org, userId: user.trim(), role }))) setUser("");
  };
  return (
    <>
      <table class="console-table" id="console-staff">
        <caption>{w.staff}</caption>
        <thead><tr><th scope="col">{w.user}</th><th scope="col">{w.role}</th><th scope="col">{w.added}</th><th scope="col" /></tr></thead>
        <tbody>
          {members?.map((m) => (
            <tr key={m.userId} id={`member-${m.userId}`}>
              <th scope="row">{m.userId}{m.userId === me && ` (${w.you})`}</th>
              <td>{roleWord(w, m.role)}</td>
              <td>{showTime(undefined, tsDate(m.addedAt), lang)}</td>
              <td>{m.userId !== me && (
                <button type="button" id={`remove-${m.userId}`} aria-label={`${w.remove}: ${m.userId}`}
                  onClick={() => void act(() => api.catalog.removeOrganizationMember({ organizationId: org, userId: m.userId }))}>{w.remove}</button>
              )}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form onSubmit={add} aria-labelledby="staff-add">
        <h2 id="staff-add">{w.add}</h2>
        <label>{w.user} <input id="staff-user" required maxLength={200} value={user} onInput={(e) => setUser((e.target as HTMLInputElement).value)} /></label>{" "}
        <label>{w.role}{" "}
          <select id="staff-role" value={role} onChange={(e) => setRole(Number((e.target as HTMLSelectElement).value) as OrganizationRole)}>
            {ROLES.map((r) => <option key={r} value={r}>{roleWord(w, r)}</option>)}
          </select>
        </label>{" "}
        <button type="submit" id="staff-save">{w.add}</button>
      </form>
    </>
  );
}

/** What an entry changed, in words: a role from before to after, or a reason. */
function changeOf(w: Words, e: AuditEntry, lang: Lang): string {
  const d = (e.detail ?? {}) as Record<string, unknown>;
  const side = (k: string) => (d[k] && typeof d[k] === "object" ? (d[k] as Record<string, unknown>) : undefined);
  const before = side("before"), after = side("after");
  const say = (v: Record<string, unknown> | undefined) =>
    v ? Object.entries(v).map(([k, x]) =>
      k === "role" ? roleWord(w, String(x)) : k.endsWith("_minor") ? taka(BigInt(Math.round(Number(x))), lang) : `${k}: ${String(x)}`).join(", ") : "";
  const parts = [];
  if (before || after) parts.push(before && after ? `${say(before)} → ${say(after)}` : before ? `${say(before)} →` : `→ ${say(after)}`);
  if (typeof d.reason === "string" && d.reason) parts.push(`“${d.reason}”`);
  return parts.join(" ");
}

/** The organisation's audit log, newest first, searched by action, user and what it is about. */
function Audit({ lang, api, org, onError }: PartProps) {
  const w = WORDS[lang];
  const [filter, setFilter] = useState({ action: "", actorId: "", target: "" });
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [next, setNext] = useState("");
  const read = async (pageToken: string) => {
    try {
      const r = await api.catalog.listAuditEntries({ organizationId: org, ...filter, pageSize: 50, pageToken });
      setEntries((cur) => (pageToken ? [...cur, ...r.entries] : r.entries));
      setNext(r.nextPageToken);
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  useEffect(() => void read(""), []);
  const search = (e: Event) => {
    e.preventDefault();
    onError("");
    void read("");
  };
  const field = (k: keyof typeof filter) => (e: Event) => setFilter({ ...filter, [k]: (e.target as HTMLInputElement).value.trim() });
  return (
    <>
      <form onSubmit={search} class="console-filter" role="search" aria-label={w.audit}>
        <label>{w.action}{" "}
          <select id="audit-action" value={filter.action} onChange={field("action")}>
            <option value="">{w.allActions}</option>
            {Object.entries(w.kinds).map(([k, v]) => <option key={k} value={k}>{v}</option>)}
            {Object.entries(w.actions).map(([k, v]) => <option key={k} value={k}>{v}</option>)}
          </select>
        </label>{" "}
        <label>{w.by} <input id="audit-actor" value={filter.actorId} onInput={field("actorId")} /></label>{" "}
        <label>{w.target} <input id="audit-target" value={filter.target} onInput={field("target")} /></label>{" "}
        <button type="submit" id="audit-search">{w.search}</button>
      </form>
      <table class="console-table" id="console-audit">
        <caption>{w.audit}</caption>
        <thead><tr><th scope="col">{w.at}</th><th scope="col">{w.by}</th><th scope="col">{w.action}</th><th scope="col">{w.target}</th><th scope="col">{w.change}</th></tr></thead>
        <tbody>
          {entries.map((e) => (
            <tr key={String(e.auditId)} data-action={e.action}>
              <td>{showTime(undefined, tsDate(e.at), lang)}</td>
              <td>{e.actorId}{e.actorKind === "admin" && ` (${w.roles.none})`}</td>
              <th scope="row">{w.actions[e.action] ?? e.action}</th>
              <td>{e.target}</td>
              <td>{changeOf(w, e, lang)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {entries.length === 0 && <p class="note">{w.noEntries}</p>}
      {next && <button type="button" id="audit-older" onClick={() => void read(next)}>{w.older}</button>}
    </>
  );
}
