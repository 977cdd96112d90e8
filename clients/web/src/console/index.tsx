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
import {
  AllocationService, CatalogService, ExportKind, LedgerService, ManifestService, OrganizationRole, PaymentService, RefundStatus, SaleState, SalesChannel, SettlementMethod, ShowStatus,
  ApiKeyScope, EndpointStatus, PartnerService, WaitingRoomService, WebhookService, createServiceClient,
} from "@seatghor/client";
import type {
  ApiKey, AuditEntry, FailedRefund, Partner, Statement, WebhookEndpoint, GetOrganizationSalesResponse, GetShowSalesResponse, ShowSalesLine, Sale as WaitingSale, OrganizationAccess, OrganizationMember, RefundToApprove, Show,
  ShowCancellation,
} from "@seatghor/client";
import uPlot from "uplot";
import uPlotCss from "uplot/dist/uPlot.min.css";

import { SHOW_ZONE, digits, mmss, showTime, taka, tsDate } from "../i18n.js";
import type { Lang } from "../i18n.js";
import { sayError } from "../say.js";
import "../staffreasons.js";
import { loadSession } from "../session.js";
import { ShowAllocations } from "./allocations.js";
import { Charts } from "./charts.js";
import { useSectionPrices } from "./prices.js";
import { EndpointDeliveries } from "./webhooks.js";
import { dhakaLocal, dhakaTimestamp } from "./dhaka.js";

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
    orgSales: "Sales of every show", orgSalesTitle: "Sales of the organisation's shows", total: "All shows",
    exports: "Download", exportOrders: "Orders (CSV)", exportTickets: "Tickets (CSV)", exportLedger: "Ledger (CSV)",
    exporting: "Preparing the file…",
    onSale: "On-sale", onSaleOf: "On-sale:", state: "State", opensAt: "Opens", endsAt: "Queue ends", waiting: "Waiting",
    admittedN: "Let in", joined: "Joined", rate: "Admission rate", perSecond: "/s", wait: "Wait for the last in line",
    available: "Places left", holdP99: "Hold time (p99)", holdErrors: "Hold errors", pause: "Pause admission",
    resume: "Resume admission", limits: "Rate limits (people a second)", min: "at least", max: "at most", setLimits: "Set limits",
    moveOpening: "Open at (Bangladesh time)", setOpening: "Move the opening", openNow: "Open now", endNow: "End the queue now",
    queueChart: "Queue and admission over the last minutes", rightAxis: "people a second, right-hand scale",
    saleStates: ["", "no queue", "before the opening (lottery)", "letting people in", "paused", "sold out", "queue over"],
    edit: "Edit", editOf: "Edit", titleEn: "Title", titleBn: "Title in Bengali", venueEn: "Venue", venueBnLabel: "Venue in Bengali",
    opensLabel: "Sale opens (Bangladesh time)", holdMinutes: "Hold time (minutes)", perAccount: "Most seats an account",
    perHold: "Most seats a hold", why2: "Why (kept in the log)", save: "Save changes", saved: "Saved.",
    openingFixed: "The sale has opened or sells through a waiting room: its opening stays (or moves on the on-sale panel).",
    move: "Move show", moveTo: "New start (Bangladesh time)", moveReason: "Reason (told to every buyer)",
    moveConfirm: "Move it; buyers may cancel for a full refund", progress: "Refunds",
    ordersLeft: "Orders left", ordersCancelled: "Orders cancelled", refundsDone: "Refunds given",
    refundsWaiting: "Refunds on their way", refundsFailed: "Refunds the gateway refused", refundedAll: "Given back",
    finished: "Every buyer dealt with", working: "Still at work: it keeps watching for a minute after the last order",
    refundsTab: "Refunds", toApprove: "Awaiting a second admin", noneToApprove: "No refund awaits approval.",
    refund: "Refund", show: "Show", order: "Order", payment: "Payment", askedBy: "Asked by", why: "Why", approve: "Approve",
    yoursWaits: "yours: another admin approves", failedRefunds: "Failed refunds, owed to buyers", noneFailed: "No refund is owed.",
    gatewaySaid: "Gateway said", settle: "Paid another way", method: "How", reference: "Reference", settleNote: "Note",
    methods: { cash: "Cash", bank: "Bank transfer", mfs: "bKash, Nagad…" },
    manual: "Refund a payment by hand", amountTaka: "Amount (taka)", manualNote: "Reason (kept in the record)",
    manualSend: "Refund", manualDone: "Refund recorded:",
    refundStatuses: ["", "awaiting approval", "sending", "given back", "failed", "asked again"],
    partnersTab: "Partners", partner: "Partner", commissionRate: "Commission", sells: "Sells", everyShow: "every show",
    orgsAndShows: "organisations and shows", noPartners: "No partners yet.", open: "Open", keys: "API keys", keyName: "Name",
    scope: "Scope", scopes: ["", "read only", "booking", "webhooks"], key: "Key", lastUsed: "Last used", revoked: "Revoked",
    revoke: "Revoke", newKey: "New key", makeKey: "Make the key", secretOnce: "The secret, shown this once: store it now",
    endpoints: "Webhook endpoints", url: "Address", health: "Health", failures: "failures in a row", since: "since",
    active: "delivering", disabled: "disabled", noEndpoints: "No endpoints.", deliveries: "Deliveries", enable: "Enable again", statement: "This month's statement",
    salesCount: "Sales", refundsCount: "Refunds", net: "Net", noLines: "Nothing sold this month.",
    channels: { web: "Web", partner: "Partner", counter: "Counter" },
    roles: { manager: "Manager", gate: "Gate staff", counter: "Counter staff", none: "Admin" },
    statuses: { scheduled: "On sale", delayed: "Delayed", boarding: "Boarding", departed: "Started", arrived: "Arrived", cancelled: "Cancelled", draft: "Draft" },
    publish: "Publish", deleteDraft: "Delete draft", deleteForGood: "Delete it for good", chartsTab: "Seat charts", allocations: "Allocations", priceIn: "Price of a seat (taka) in", placeIn: "Price of a place (taka) in",
    periodOrders: "Files of the days", fromDay: "from", toDay: "to",
    periodOrdersFile: "Orders of the shows starting then (CSV)", periodLedgerFile: "Ledger posted then (CSV)",
    actions: {
      "organization.create": "Organisation created", "member.set": "Staff role given", "member.remove": "Staff removed",
      "show.create": "Show created", "show.publish": "Show published", "show.delete": "Draft deleted", "layout_template.create": "Seat chart saved", "layout_template.update": "Seat chart changed", "allocation.create": "Seats allocated to a partner", "allocation.release": "Allocation given back", "show.cancel": "Show cancelled", "show.reschedule": "Show moved",
      "show.withdraw": "Show withdrawn", "show.update": "Show changed", "route.create": "Route created", "route.update": "Route changed",
      "timetable.create": "Timetable created", "timetable.update": "Timetable changed",
      "counter_shift.open": "Counter shift opened", "counter_shift.close": "Counter shift closed",
      "refund.request": "Refund asked for", "refund.approve": "Refund approved", "refund.settle": "Failed refund paid another way",
      "counter.refund": "Cash refund at a counter", "counter.pay_owed": "Owed cash paid at a counter",
    } as Record<string, string>,
    kinds: { "member.": "Staff", "show.": "Shows", "layout_template.": "Seat charts", "allocation.": "Allocations", "route.": "Routes", "timetable.": "Timetables", "counter_shift.": "Counter shifts",
      "refund.": "Refunds", "counter.": "Counter cash",
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
    orgSales: "সব শোর বিক্রি", orgSalesTitle: "সংস্থার সব শোর বিক্রি", total: "সব শো",
    exports: "ডাউনলোড", exportOrders: "অর্ডার (CSV)", exportTickets: "টিকিট (CSV)", exportLedger: "হিসাব (CSV)",
    exporting: "ফাইল তৈরি হচ্ছে…",
    onSale: "বিক্রি শুরু", onSaleOf: "বিক্রি শুরু:", state: "অবস্থা", opensAt: "খুলবে", endsAt: "সারি শেষ", waiting: "অপেক্ষায়",
    admittedN: "ঢুকতে দেওয়া", joined: "যোগ দিয়েছেন", rate: "ঢোকার হার", perSecond: "/সে.", wait: "সারির শেষজনের অপেক্ষা",
    available: "বাকি আসন", holdP99: "আসন ধরার সময় (p99)", holdErrors: "আসন ধরায় ত্রুটি", pause: "ঢোকা থামান",
    resume: "ঢোকা আবার চালু", limits: "হারের সীমা (প্রতি সেকেন্ডে জন)", min: "অন্তত", max: "সর্বোচ্চ", setLimits: "সীমা ঠিক করুন",
    moveOpening: "খুলবে (বাংলাদেশ সময়)", setOpening: "খোলার সময় বদলান", openNow: "এখনই খুলুন", endNow: "সারি এখনই শেষ",
    queueChart: "গত কয়েক মিনিটের সারি ও ঢোকা", rightAxis: "প্রতি সেকেন্ডে জন, ডান দিকের মাপ",
    saleStates: ["", "সারি নেই", "খোলার আগে (লটারি)", "ঢুকতে দেওয়া হচ্ছে", "থামানো", "সব বিক্রি", "সারি শেষ"],
    edit: "সম্পাদনা", editOf: "সম্পাদনা:", titleEn: "নাম (ইংরেজি)", titleBn: "নাম (বাংলা)", venueEn: "ভেন্যু (ইংরেজি)",
    venueBnLabel: "ভেন্যু (বাংলা)", opensLabel: "বিক্রি শুরু (বাংলাদেশ সময়)", holdMinutes: "ধরে রাখার সময় (মিনিট)",
    perAccount: "একজন সর্বোচ্চ কত আসন", perHold: "একবারে সর্বোচ্চ কত আসন", why2: "কারণ (লগে থাকবে)", save: "বদল রাখুন",
    saved: "রাখা হয়েছে।", openingFixed: "বিক্রি শুরু হয়ে গেছে বা ওয়েটিং রুম দিয়ে হয়: শুরুর সময় বদলায় না (অথবা বিক্রি-শুরু প্যানেলে বদলান)।",
    move: "শোর সময় বদল", moveTo: "নতুন শুরু (বাংলাদেশ সময়)", moveReason: "কারণ (প্রত্যেক ক্রেতাকে জানানো হবে)",
    moveConfirm: "সময় বদলান; ক্রেতা চাইলে বাতিল করে পুরো টাকা ফেরত পাবেন", progress: "টাকা ফেরত",
    ordersLeft: "বাকি অর্ডার", ordersCancelled: "বাতিল অর্ডার", refundsDone: "ফেরত দেওয়া হয়েছে",
    refundsWaiting: "ফেরত পথে", refundsFailed: "গেটওয়ে ফেরত দেয়নি", refundedAll: "মোট ফেরত",
    finished: "সব ক্রেতার কাজ শেষ", working: "কাজ চলছে: শেষ অর্ডারের পরও এক মিনিট নজর রাখে",
    refundsTab: "টাকা ফেরত", toApprove: "দ্বিতীয় অ্যাডমিনের অনুমোদনের অপেক্ষায়", noneToApprove: "কোনো ফেরত অনুমোদনের অপেক্ষায় নেই।",
    refund: "ফেরত", show: "শো", order: "অর্ডার", payment: "পেমেন্ট", askedBy: "কে চেয়েছেন", why: "কারণ", approve: "অনুমোদন",
    yoursWaits: "আপনার চাওয়া: অন্য অ্যাডমিন অনুমোদন করবেন", failedRefunds: "ব্যর্থ ফেরত, ক্রেতার পাওনা", noneFailed: "কোনো পাওনা নেই।",
    gatewaySaid: "গেটওয়ের উত্তর", settle: "অন্যভাবে দেওয়া হয়েছে", method: "কীভাবে", reference: "রেফারেন্স", settleNote: "মন্তব্য",
    methods: { cash: "নগদ", bank: "ব্যাংক ট্রান্সফার", mfs: "বিকাশ, নগদ…" },
    manual: "হাতে টাকা ফেরত", amountTaka: "পরিমাণ (টাকা)", manualNote: "কারণ (রেকর্ডে থাকবে)",
    manualSend: "ফেরত দিন", manualDone: "ফেরত রেকর্ড হয়েছে:",
    refundStatuses: ["", "অনুমোদনের অপেক্ষায়", "পাঠানো হচ্ছে", "ফেরত দেওয়া হয়েছে", "ব্যর্থ", "আবার জিজ্ঞাসা"],
    partnersTab: "পার্টনার", partner: "পার্টনার", commissionRate: "কমিশন", sells: "বিক্রি করে", everyShow: "সব শো",
    orgsAndShows: "সংস্থা ও শো", noPartners: "এখনো কোনো পার্টনার নেই।", open: "খুলুন", keys: "API কী", keyName: "নাম",
    scope: "অধিকার", scopes: ["", "শুধু পড়া", "বুকিং", "ওয়েবহুক"], key: "কী", lastUsed: "শেষ ব্যবহার", revoked: "বাতিল",
    revoke: "বাতিল করুন", newKey: "নতুন কী", makeKey: "কী তৈরি করুন", secretOnce: "গোপন কী, শুধু এবারই দেখানো হলো: এখনই রেখে দিন",
    endpoints: "ওয়েবহুক ঠিকানা", url: "ঠিকানা", health: "অবস্থা", failures: "বার পরপর ব্যর্থ", since: "থেকে",
    active: "পাঠানো চলছে", disabled: "বন্ধ", noEndpoints: "কোনো ঠিকানা নেই।", deliveries: "পাঠানোর খতিয়ান", enable: "আবার চালু করুন", statement: "এই মাসের হিসাব",
    salesCount: "বিক্রি", refundsCount: "ফেরত", net: "নিট", noLines: "এ মাসে কিছু বিক্রি হয়নি।",
    channels: { web: "ওয়েব", partner: "পার্টনার", counter: "কাউন্টার" },
    roles: { manager: "ম্যানেজার", gate: "গেট কর্মী", counter: "কাউন্টার কর্মী", none: "অ্যাডমিন" },
    statuses: { scheduled: "বিক্রি চলছে", delayed: "দেরি", boarding: "যাত্রী উঠছে", departed: "শুরু হয়েছে", arrived: "পৌঁছেছে", cancelled: "বাতিল", draft: "খসড়া" },
    publish: "প্রকাশ করুন", deleteDraft: "খসড়া মুছুন", deleteForGood: "চিরতরে মুছে ফেলুন", chartsTab: "আসন-নকশা", allocations: "বরাদ্দ", priceIn: "প্রতি আসনের দাম (টাকা):", placeIn: "প্রতি জায়গার দাম (টাকা):",
    periodOrders: "এই দিনগুলোর ফাইল", fromDay: "প্রথম দিন", toDay: "শেষ দিন",
    periodOrdersFile: "এ সময়ে শুরু হওয়া শোগুলোর অর্ডার (CSV)", periodLedgerFile: "এ সময়ের হিসাব-খাতা (CSV)",
    actions: {
      "organization.create": "সংস্থা তৈরি", "member.set": "কর্মীর ভূমিকা দেওয়া", "member.remove": "কর্মী বাদ",
      "show.create": "শো তৈরি", "show.publish": "শো প্রকাশ", "show.delete": "খসড়া মুছে ফেলা", "layout_template.create": "আসন-নকশা রাখা", "layout_template.update": "আসন-নকশা বদল", "allocation.create": "পার্টনারকে আসন বরাদ্দ", "allocation.release": "বরাদ্দ ফেরত", "show.cancel": "শো বাতিল", "show.reschedule": "শোর সময় বদল",
      "show.withdraw": "শো প্রত্যাহার", "show.update": "শো বদল", "route.create": "রুট তৈরি", "route.update": "রুট বদল",
      "timetable.create": "সময়সূচি তৈরি", "timetable.update": "সময়সূচি বদল",
      "counter_shift.open": "কাউন্টার শিফট শুরু", "counter_shift.close": "কাউন্টার শিফট শেষ",
      "refund.request": "ফেরত চাওয়া", "refund.approve": "ফেরত অনুমোদিত", "refund.settle": "ব্যর্থ ফেরত অন্যভাবে দেওয়া",
      "counter.refund": "কাউন্টারে নগদ ফেরত", "counter.pay_owed": "কাউন্টারে পাওনা নগদ দেওয়া",
    } as Record<string, string>,
    kinds: { "member.": "কর্মী", "show.": "শো", "layout_template.": "আসন-নকশা", "allocation.": "বরাদ্দ", "route.": "রুট", "timetable.": "সময়সূচি", "counter_shift.": "কাউন্টার শিফট",
      "refund.": "টাকা ফেরত", "counter.": "কাউন্টারের নগদ",
      "organization.": "সংস্থা" } as Record<string, string>,
  },
} as const;

type Words = (typeof WORDS)[Lang];
type Tab = "shows" | "charts" | "staff" | "audit" | "refunds" | "partners";
const TABS: Tab[] = ["shows", "charts", "staff", "audit", "refunds", "partners"];
/** Tabs only admins have: refund rights and partners are theirs alone. */
const ADMIN_TABS: Tab[] = ["refunds", "partners"];

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
  return {
    catalog: createServiceClient(CatalogService, options), ledger: createServiceClient(LedgerService, options),
    payment: createServiceClient(PaymentService, options), manifest: createServiceClient(ManifestService, options),
    partner: createServiceClient(PartnerService, options), webhook: createServiceClient(WebhookService, options),
    sale: createServiceClient(WaitingRoomService, options), allocation: createServiceClient(AllocationService, options),
  };
}
type Api = ReturnType<typeof clients>;

/**
 * Renders the console into el; returns what unmounts it. The console
 * keeps where it is in the address (/console/<organisation>/<tab>) and
 * reads it from there when mounted, so a reload, a shared link or a change
 * of language opens the same organisation and tab.
 */
export function mount(el: HTMLElement, props: { lang: Lang }): () => void {
  if (!document.getElementById("uplot-css")) {
    const style = document.createElement("style");
    style.id = "uplot-css";
    style.textContent = uPlotCss;
    document.head.append(style);
  }
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
            {TABS.filter((t) => admin || !ADMIN_TABS.includes(t)).map((t) => (
              <button type="button" key={t} id={`tab-${t}`} aria-pressed={tab === t} onClick={() => { setError(""); setTab(t); }}>
                {t === "refunds" ? w.refundsTab : t === "partners" ? w.partnersTab : t === "charts" ? w.chartsTab : w[t]}</button>
            ))}
          </nav>
          {tab === "shows" && <Shows key={org} lang={lang} api={api} org={org} onError={setError} />}
          {tab === "charts" && <Charts key={org} lang={lang} catalog={api.catalog} org={org} onError={setError} />}
          {tab === "staff" && <Staff key={org} lang={lang} api={api} org={org} onError={setError} />}
          {tab === "audit" && <Audit key={org} lang={lang} api={api} org={org} onError={setError} />}
          {tab === "refunds" && admin && <Refunds lang={lang} api={api} org={org} onError={setError} />}
          {tab === "partners" && admin && <Partners lang={lang} api={api} org={org} onError={setError} />}
        </>
      )}
    </section>
  );
}

/**
 * Reads at once and then every `every` ms while the page is in sight,
 * until the component goes or deps change; only a living component takes
 * the answer (got), and a refusal is said on the page.
 */
function usePoll<T>(read: () => Promise<T>, got: (r: T) => void, every: number, onError: (s: string) => void, lang: Lang,
  deps: unknown[] = []) {
  useEffect(() => {
    let live = true;
    const once = () => read().then((r) => { if (live) got(r); }, (e) => onError(sayError(e, lang)));
    void once();
    const timer = setInterval(() => { if (!document.hidden) void once(); }, every);
    return () => { live = false; clearInterval(timer); };
  }, deps);
}

/**
 * A staff write, then reload: the API's refusal is said on the page. It
 * answers whether the write went through.
 */
function acting(reload: () => Promise<unknown>, onError: (s: string) => void, lang: Lang) {
  return async (call: () => Promise<unknown>) => {
    onError("");
    try {
      await call();
      await reload();
      return true;
    } catch (err) {
      onError(sayError(err, lang));
      return false;
    }
  };
}

interface PartProps { lang: Lang; api: Api; org: string; onError: (s: string) => void }

function statusKey(s: Show): keyof Words["statuses"] {
  switch (s.status) {
    case ShowStatus.DELAYED: return "delayed";
    case ShowStatus.BOARDING: return "boarding";
    case ShowStatus.DEPARTED: return "departed";
    case ShowStatus.ARRIVED: return "arrived";
    case ShowStatus.CANCELLED: return "cancelled";
    case ShowStatus.DRAFT: return "draft";
    default: return "scheduled";
  }
}

/** The organisation's shows, soonest first, with what a manager does to each. */
function Shows({ lang, api, org, onError }: PartProps) {
  const w = WORDS[lang];
  const [shows, setShows] = useState<Show[]>();
  const [cancelling, setCancelling] = useState<bigint>();
  const [moving, setMoving] = useState<bigint>();
  const [moveTo, setMoveTo] = useState("");
  const [watching, setWatching] = useState<Show>();
  const [queue, setQueue] = useState<Show>();
  const [editing, setEditing] = useState<Show>();
  const [all, setAll] = useState(false);
  const [following, setFollowing] = useState<Show>();
  const [allocating, setAllocating] = useState<Show>();
  const [reason, setReason] = useState("");
  const load = () => api.catalog.listShows({ organizationId: org, includeDrafts: true, pageSize: 200 }).then((r) => setShows(r.shows), (e) => onError(sayError(e, lang)));
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
  const [deleting, setDeleting] = useState<bigint>();
  const publish = async (show: bigint) => {
    try {
      await api.catalog.publishShow({ showId: show });
      await load();
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  const drop = async (show: bigint) => {
    try {
      await api.catalog.deleteShow({ showId: show });
      setDeleting(undefined);
      await load();
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  const move = async (e: Event) => {
    e.preventDefault();
    try {
      await api.catalog.rescheduleShow({ showId: moving!, startsAt: dhakaTimestamp(moveTo), reason: reason.trim() });
      setMoving(undefined);
      setReason("");
      await load();
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  const reasonField = (
    <label>{cancelling ? w.cancelReason : w.moveReason} <input id="show-reason" required minLength={3} maxLength={300} value={reason}
      onInput={(e) => setReason((e.target as HTMLInputElement).value)} /></label>
  );
  if (!shows) return null;
  if (shows.length === 0) return <p class="note">{w.noShows}</p>;
  const title = (s: Show) => (lang === "bn" && s.titleBn) || s.title;
  return (
    <>
    <p><button type="button" id="org-sales" aria-expanded={all} onClick={() => setAll(!all)}>{w.orgSales}</button></p>
    {all && <OrgSales lang={lang} api={api} org={org} onError={onError} />}
    {watching && <Sales key={String(watching.showId)} lang={lang} api={api} show={watching} title={title(watching)}
      onClose={() => setWatching(undefined)} onError={onError} />}
    {queue && <OnSale key={String(queue.showId)} lang={lang} api={api} show={queue.showId} title={title(queue)}
      onClose={() => setQueue(undefined)} onError={onError} />}
    {editing && <EditShow key={String(editing.showId)} lang={lang} api={api} show={editing}
      onClose={() => setEditing(undefined)} onSaved={() => void load()} onError={onError} />}
    {allocating && <ShowAllocations key={String(allocating.showId)} lang={lang} api={api.allocation} show={allocating.showId}
      areas={allocating.gaAreas.map((a) => a.name)}
      title={title(allocating)} onClose={() => setAllocating(undefined)} onError={onError} />}
    {following && <Cancellation key={String(following.showId)} lang={lang} api={api} show={following.showId} title={title(following)}
      onClose={() => setFollowing(undefined)} onError={onError} />}
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
              {s.status === ShowStatus.DRAFT ? (
                <><button type="button" id={`publish-${s.showId}`} onClick={() => void publish(s.showId)}>{w.publish}</button>{" · "}
                  <button type="button" id={`edit-${s.showId}`} onClick={() => setEditing(s)}>{w.edit}</button>{" · "}
                  {deleting === s.showId
                    ? <button type="button" class="danger" id={`delete-confirm-${s.showId}`} onClick={() => void drop(s.showId)}>{w.deleteForGood}</button>
                    : <button type="button" class="danger" id={`delete-${s.showId}`} onClick={() => setDeleting(s.showId)}>{w.deleteDraft}</button>}</>
              ) : (<>
              <button type="button" id={`sales-${s.showId}`} onClick={() => setWatching(s)}>{w.sales}</button>{" · "}
              {s.status !== ShowStatus.CANCELLED && (
                <><button type="button" id={`edit-${s.showId}`} onClick={() => setEditing(s)}>{w.edit}</button>{" · "}</>
              )}
              {s.status !== ShowStatus.CANCELLED && (
                <><button type="button" id={`allocations-${s.showId}`} onClick={() => setAllocating(s)}>{w.allocations}</button>{" · "}</>
              )}
              {s.waitingRoom?.enabled && s.status !== ShowStatus.CANCELLED && (
                <><button type="button" id={`onsale-${s.showId}`} onClick={() => setQueue(s)}>{w.onSale}</button>{" · "}</>
              )}
              <a href={`/show/${s.showId}`}>{w.seatMap}</a>{" · "}<a href={`/manifest/${s.showId}`}>{w.manifest}</a>
              {s.status !== ShowStatus.CANCELLED && cancelling !== s.showId && moving !== s.showId && (
                <>
                  {" · "}<button type="button" id={`move-${s.showId}`} onClick={() => { setCancelling(undefined); setMoving(s.showId); }}>{w.move}</button>
                  {" · "}<button type="button" class="danger" id={`cancel-${s.showId}`} onClick={() => { setMoving(undefined); setCancelling(s.showId); }}>{w.cancel}</button>
                </>
              )}
              {s.status === ShowStatus.CANCELLED && (
                <>{" · "}<button type="button" id={`progress-${s.showId}`} onClick={() => setFollowing(s)}>{w.progress}</button></>
              )}
              {cancelling === s.showId && (
                <form onSubmit={cancel} class="inline">
                  {reasonField}{" "}
                  <button type="submit" class="danger" id="cancel-confirm">{w.cancelConfirm}</button>
                </form>
              )}
              {moving === s.showId && (
                <form onSubmit={move} class="inline">
                  <label>{w.moveTo} <input id="move-to" type="datetime-local" required value={moveTo}
                    onInput={(e) => setMoveTo((e.target as HTMLInputElement).value)} /></label>{" "}
                  {reasonField}{" "}
                  <button type="submit" id="move-confirm">{w.moveConfirm}</button>
                </form>
              )}
              </>)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
    </>
  );
}

/**
 * How far a cancelled show's mass refund has got (GetShowCancellation),
 * read every 3 seconds until the job is through; the job itself resumes
 * on its own after a crash (decision 0440), this only watches it.
 */
function Cancellation(props: { lang: Lang; api: Api; show: bigint; title: string; onClose: () => void; onError: (s: string) => void }) {
  const { lang, api } = props;
  const w = WORDS[lang];
  const [c, setC] = useState<ShowCancellation>();
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const read = () => api.catalog.getShowCancellation({ showId: props.show }).then((r) => {
      if (!live) return;
      setC(r.cancellation);
      if (!r.cancellation?.doneAt) timer = setTimeout(read, 3000);
    }, (e) => props.onError(sayError(e, lang)));
    void read();
    return () => { live = false; clearTimeout(timer); };
  }, []);
  return (
    <section class="console-sales" aria-labelledby="cancellation-title" aria-busy={!c}>
    <h2 id="cancellation-title">{w.progress}: {props.title}</h2>
    <button type="button" id="cancellation-close" onClick={props.onClose}>{w.close}</button>
    {c && (
    <dl class="console-money" id={`cancellation-${props.show}`} aria-live="polite">
      <dt>{w.ordersCancelled}</dt><dd class="orders-cancelled">{digits(c.ordersCancelled, lang)}</dd>
      <dt>{w.ordersLeft}</dt><dd class="orders-left">{digits(c.ordersLeft, lang)}</dd>
      <dt>{w.refundsDone}</dt><dd class="refunds-done">{digits(c.refundsSucceeded, lang)}</dd>
      <dt>{w.refundsWaiting}</dt><dd>{digits(c.refundsPending, lang)}</dd>
      <dt>{w.refundsFailed}</dt><dd>{digits(c.refundsFailed, lang)}</dd>
      <dt>{w.refundedAll}</dt><dd class="refunded">{taka(c.refunded?.amountMinor ?? 0n, lang)}</dd>
      <dt>{w.status}</dt><dd class="cancellation-state">{c.doneAt ? `${w.finished} (${showTime(undefined, tsDate(c.doneAt), lang)})` : w.working}</dd>
    </dl>
    )}
    </section>
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
  usePoll(() => api.ledger.getShowSales({ showId: show.showId, bucket: { seconds: BARS[bar], nanos: 0 } }), setSales, 5000,
    props.onError, lang, [bar]);
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
          <Exports lang={lang} api={api} show={show.showId} onError={props.onError} />
        </>
      )}
    </section>
  );
}


/**
 * A show's editor (decision 0454): its names in English and Bengali, its
 * opening while the sale has not opened and it has no waiting room, and
 * its hold settings. Only what changed is sent (UpdateShow); the server
 * refuses, with the field, what would hurt a buyer.
 */
function EditShow(props: { lang: Lang; api: Api; show: Show; onClose: () => void; onSaved: () => void; onError: (s: string) => void }) {
  const { lang, api, show } = props;
  const w = WORDS[lang];
  const initial = {
    title: show.title, titleBn: show.titleBn, venue: show.venue, venueBn: show.venueBn, opens: dhakaLocal(show.onSaleAt),
    hold: String(Math.round(Number(show.holdTtl?.seconds ?? 0n) / 60)), account: String(show.maxSeatsPerAccount),
    perHold: String(show.maxSeatsPerHold), reason: "",
  };
  const [f, setF] = useState(initial);
  const [saved, setSaved] = useState(false);
  // A venue's prices by section, in taka (a trip's are its fares): a
  // section's changes while none of its seats is held or sold (decision 0459).
  const prices = useSectionPrices(show.stops.length === 0 ? show.sections : []);
  // And of each general-admission area, likewise (decision 0474).
  const areaPrices = useSectionPrices(show.gaAreas.map((a) => ({ name: a.name, nameBn: "", priceMinor: a.priceMinor })));
  const opensLater = Number(show.onSaleAt?.seconds ?? 0n) * 1000 > Date.now() && !show.waitingRoom?.enabled;
  const field = (k: keyof typeof f) => (e: Event) => { setSaved(false); setF({ ...f, [k]: (e.target as HTMLInputElement).value }); };
  const save = async (e: Event) => {
    e.preventDefault();
    props.onError("");
    const changed = (k: keyof typeof f) => f[k] !== initial[k];
    try {
      await api.catalog.updateShow({
        showId: show.showId, reason: f.reason.trim(),
        ...(changed("title") && { title: f.title }), ...(changed("titleBn") && { titleBn: f.titleBn }),
        ...(changed("venue") && { venue: f.venue }), ...(changed("venueBn") && { venueBn: f.venueBn }),
        ...(changed("opens") && { onSaleAt: dhakaTimestamp(f.opens) }),
        ...(changed("hold") && { holdTtl: { seconds: BigInt(Math.round(Number(f.hold) * 60)), nanos: 0 } }),
        ...(changed("account") && { maxSeatsPerAccount: Number(f.account) }),
        ...(changed("perHold") && { maxSeatsPerHold: Number(f.perHold) }),
        sectionPrices: prices.changes(),
        gaAreaPrices: areaPrices.changes().map((p) => ({ gaArea: p.section, priceMinor: p.priceMinor })),
      });
      setSaved(true);
      props.onSaved();
    } catch (err) {
      props.onError(sayError(err, lang));
    }
  };
  const input = (k: keyof typeof f, label: string, attrs: Record<string, unknown> = {}) => (
    <label>{label} <input id={`edit-${k}`} value={f[k]} onInput={field(k)} {...attrs} /></label>
  );
  return (
    <section class="console-sales" id="console-edit" aria-labelledby="edit-heading">
      <h2 id="edit-heading">{w.editOf} {(lang === "bn" && show.titleBn) || show.title}</h2>
      <button type="button" id="edit-close" onClick={props.onClose}>{w.close}</button>
      <form onSubmit={save}>
        {input("title", w.titleEn, { required: true, maxLength: 200 })}
        {input("titleBn", w.titleBn, { maxLength: 200, lang: "bn" })}
        {input("venue", w.venueEn, { maxLength: 200 })}
        {input("venueBn", w.venueBnLabel, { maxLength: 200, lang: "bn" })}
        {opensLater ? input("opens", w.opensLabel, { type: "datetime-local", required: true })
          : <p class="note" id="edit-opening-fixed">{w.opensLabel}: {showTime(undefined, tsDate(show.onSaleAt), lang)}. {w.openingFixed}</p>}
        {input("hold", w.holdMinutes, { type: "number", min: 1, max: 60, required: true })}
        {input("account", w.perAccount, { type: "number", min: 1, max: 100, required: true })}
        {input("perHold", w.perHold, { type: "number", min: 1, max: 100, required: true })}
        {prices.fields(lang, w.priceIn, "edit-price", () => setSaved(false))}
        {areaPrices.fields(lang, w.placeIn, "edit-area-price", () => setSaved(false))}
        {input("reason", w.why2, { maxLength: 300 })}
        <button type="submit" id="edit-save">{w.save}</button>
        {saved && <span role="status" id="edit-saved"> {w.saved}</span>}
      </form>
    </section>
  );
}

/**
 * The organisation's sales show by show (decision 0451): places sold and
 * held and the money of each of its shows from yesterday on, and their
 * totals, read every 10 seconds while open.
 */
function OrgSales({ lang, api, org, onError }: PartProps) {
  const w = WORDS[lang];
  const [sales, setSales] = useState<GetOrganizationSalesResponse>();
  usePoll(() => api.ledger.getOrganizationSales({ organizationId: org }), setSales, 10_000, onError, lang);
  if (!sales) return null;
  const row = (l: ShowSalesLine, head: string, id: string) => (
    <tr key={id} id={id}>
      <th scope="row">{head}</th>
      <td class="sold">{digits(l.sold, lang)} / {digits(l.places, lang)}</td><td>{digits(l.held, lang)}</td>
      <td class="taken">{taka(l.money?.salesMinor ?? 0n, lang)}</td><td>{taka(l.money?.refundsMinor ?? 0n, lang)}</td>
      <td>{taka(l.money?.commissionMinor ?? 0n, lang)}</td><td class="operator">{taka(l.money?.operatorMinor ?? 0n, lang)}</td>
    </tr>
  );
  return (
    <>
    <PeriodExport lang={lang} api={api} org={org} onError={onError} />
    <table class="console-table" id="org-sales-table" aria-live="polite">
      <caption>{w.orgSalesTitle} ({w.updated}: {showTime(undefined, tsDate(sales.asOf), lang)})</caption>
      <thead><tr><th scope="col">{w.shows}</th><th scope="col">{w.sold}</th><th scope="col">{w.held}</th><th scope="col">{w.taken}</th>
        <th scope="col">{w.refunds}</th><th scope="col">{w.commission}</th><th scope="col">{w.operatorShare}</th></tr></thead>
      <tbody>
        {sales.shows.map((l) => row(l, `${(lang === "bn" && l.titleBn) || l.title} · ${showTime(undefined, tsDate(l.startsAt), lang)}`,
          `org-sales-${l.showId}`))}
      </tbody>
      {sales.total && <tfoot>{row(sales.total, w.total, "org-sales-total")}</tfoot>}
    </table>
    </>
  );
}

/** How many readings of a sale the on-sale chart keeps: 10 minutes at one each 2 s. */
const SAMPLES = 300;

/**
 * A waiting room's on-sale: its sale read every 2 seconds
 * (WaitingRoomService.GetSale), the queue and the admission rate drawn
 * over the last minutes from those readings, and the operator's controls
 * (UpdateSale): pause and resume, the rate's limits, the opening moved or
 * brought to now, the queue ended. The server checks who may; the panel
 * says why when it refuses.
 */
function OnSale(props: { lang: Lang; api: Api; show: bigint; title: string; onClose: () => void; onError: (s: string) => void }) {
  const { lang, api, show } = props;
  const w = WORDS[lang];
  const [sale, setSale] = useState<WaitingSale>();
  const [limits, setLimits] = useState({ min: "", max: "" });
  const [opening, setOpening] = useState("");
  const samples = useRef<{ t: number[]; waiting: number[]; rate: number[] }>({ t: [], waiting: [], rate: [] });
  const [drawn, setDrawn] = useState(0);
  const took = (x: WaitingSale | undefined) => {
    if (!x) return;
    setSale(x);
    const s = samples.current;
    s.t.push(Date.now() / 1000);
    s.waiting.push(Number(x.waiting));
    s.rate.push(x.admissionRate);
    for (const k of ["t", "waiting", "rate"] as const) s[k].splice(0, Math.max(0, s[k].length - SAMPLES));
    setDrawn((n) => n + 1);
  };
  usePoll(() => api.sale.getSale({ showId: show }), (r) => took(r.sale), 2000, props.onError, lang);
  const update = async (change: Record<string, unknown>) => {
    props.onError("");
    try {
      took((await api.sale.updateSale({ showId: show, ...change })).sale);
    } catch (err) {
      props.onError(sayError(err, lang));
    }
  };
  const n = (v: bigint | number) => digits(v.toLocaleString("en-IN"), lang);
  const secs = (d: { seconds: bigint; nanos: number } | undefined) => (d ? Number(d.seconds) + d.nanos / 1e9 : 0);
  return (
    <section class="console-sales" id="console-onsale" aria-labelledby="onsale-title" aria-busy={!sale}>
      <h2 id="onsale-title">{w.onSaleOf} {props.title}</h2>
      <button type="button" id="onsale-close" onClick={props.onClose}>{w.close}</button>
      {sale && (
        <>
          <dl class="console-money" id="onsale-figures" aria-live="polite">
            <dt>{w.state}</dt><dd id="onsale-state">{w.saleStates[sale.state] ?? ""}</dd>
            <dt>{w.opensAt}</dt><dd>{showTime(undefined, tsDate(sale.opensAt), lang)}</dd>
            <dt>{w.endsAt}</dt><dd>{showTime(undefined, tsDate(sale.endsAt), lang)}</dd>
            <dt>{w.waiting}</dt><dd id="onsale-waiting">{n(sale.waiting)}</dd>
            <dt>{w.admittedN}</dt><dd id="onsale-admitted">{n(sale.admitted)}</dd>
            <dt>{w.joined}</dt><dd id="onsale-joined">{n(sale.joined)}</dd>
            <dt>{w.rate}</dt><dd id="onsale-rate">{n(Math.round(sale.admissionRate))}{w.perSecond} ({n(sale.minAdmissionRate)}–{n(sale.maxAdmissionRate)})</dd>
            <dt>{w.wait}</dt><dd>{mmss(Math.round(secs(sale.estimatedWait)), lang)}</dd>
            <dt>{w.available}</dt><dd id="onsale-available">{n(sale.available)}</dd>
            <dt>{w.holdP99}</dt><dd>{n(Math.round(secs(sale.holdP99) * 1000))} ms</dd>
            <dt>{w.holdErrors}</dt><dd>{n(Math.round(sale.holdErrorRate * 1000) / 10)}%</dd>
          </dl>
          <p>
            {sale.paused
              ? <button type="button" id="onsale-resume" onClick={() => void update({ paused: false })}>{w.resume}</button>
              : <button type="button" id="onsale-pause" class="danger" onClick={() => void update({ paused: true })}>{w.pause}</button>}
            {" "}<button type="button" id="onsale-end" onClick={() => void update({ endsAt: dhakaTimestamp(nowInDhaka()) })}>{w.endNow}</button>
          </p>
          <form class="inline" onSubmit={(e) => {
            e.preventDefault();
            void update({ ...(limits.min && { minAdmissionRate: Number(limits.min) }), ...(limits.max && { maxAdmissionRate: Number(limits.max) }) });
          }}>
            <fieldset>
              <legend>{w.limits}</legend>
              <label>{w.min} <input id="onsale-min" type="number" min="1" max="100000" value={limits.min}
                onInput={(e) => setLimits({ ...limits, min: (e.target as HTMLInputElement).value })} /></label>{" "}
              <label>{w.max} <input id="onsale-max" type="number" min="1" max="100000" value={limits.max}
                onInput={(e) => setLimits({ ...limits, max: (e.target as HTMLInputElement).value })} /></label>{" "}
              <button type="submit" id="onsale-limits">{w.setLimits}</button>
            </fieldset>
          </form>
          {sale.state === SaleState.SCHEDULED && (
            <form class="inline" onSubmit={(e) => { e.preventDefault(); void update({ opensAt: dhakaTimestamp(opening) }); }}>
              <label>{w.moveOpening} <input id="onsale-opening" type="datetime-local" required value={opening}
                onInput={(e) => setOpening((e.target as HTMLInputElement).value)} /></label>{" "}
              <button type="submit" id="onsale-move">{w.setOpening}</button>{" "}
              <button type="button" id="onsale-open-now" onClick={() => void update({ opensAt: dhakaTimestamp(nowInDhaka()) })}>{w.openNow}</button>
            </form>
          )}
          <QueueChart lang={lang} samples={samples.current} drawn={drawn} label={w.queueChart} />
        </>
      )}
    </section>
  );
}

/** The queue (people waiting) and the admission rate over time, on two axes. */
function QueueChart(props: { lang: Lang; samples: { t: number[]; waiting: number[]; rate: number[] }; drawn: number; label: string }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot>();
  const w = WORDS[props.lang];
  const s = props.samples;
  useEffect(() => {
    if (!el.current) return;
    const data: uPlot.AlignedData = [s.t, s.waiting, s.rate];
    if (!plot.current) {
      const num = (_u: uPlot, vals: number[]) => vals.map((v) => digits(v.toLocaleString("en-IN"), props.lang));
      plot.current = new uPlot({
        width: Math.min(640, el.current.clientWidth || 320), height: 200, legend: { show: false },
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), SHOW_ZONE),
        scales: { rate: {} },
        series: [{}, { label: w.waiting, stroke: "#0b5e42", width: 2 }, { label: w.rate, stroke: "#b3261e", scale: "rate" }],
        axes: [{}, { values: num }, { side: 1, scale: "rate", values: num }],
      }, data, el.current);
    } else {
      plot.current.setData(data);
    }
  }, [props.drawn]);
  useEffect(() => () => plot.current?.destroy(), []);
  return (
    <figure class="console-chart">
      <figcaption id="onsale-chart-title">{props.label}</figcaption>
      <div ref={el} id="onsale-chart" role="img" aria-labelledby="onsale-chart-title" />
      <p class="note" aria-hidden="true">
        <span style="color: #0b5e42">━</span> {w.waiting}{" · "}<span style="color: #b3261e">━</span> {w.rate} ({w.rightAxis})
      </p>
    </figure>
  );
}

/** Now as a datetime-local value in Bangladesh time (UTC+6). */
function nowInDhaka(): string {
  return new Date(Date.now() + 6 * 3600_000).toISOString().slice(0, 16);
}

/** Hands the browser a file made of parts to save as name. */
function save(name: string, type: string, parts: BlobPart[]) {
  const url = URL.createObjectURL(new Blob(parts, { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  // Not at once: the browser reads the blob after the click returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Streams an ExportSales file, a piece at a time, and hands it to the browser. */
async function saveExport(api: Api, req: Parameters<Api["ledger"]["exportSales"]>[0]) {
  let name = "", type = "";
  const parts: BlobPart[] = [];
  for await (const piece of api.ledger.exportSales(req)) {
    name ||= piece.filename;
    type ||= piece.contentType;
    parts.push(piece.data as Uint8Array<ArrayBuffer>);
  }
  save(name, type, parts);
}

/**
 * The orders of the organisation's shows starting between two days
 * (Bangladesh dates, both included) as one file (decision 0460).
 */
function PeriodExport({ lang, api, org, onError }: PartProps) {
  const w = WORDS[lang];
  const today = nowInDhaka().slice(0, 10);
  const [from, setFrom] = useState(today.slice(0, 8) + "01");
  const [to, setTo] = useState(today);
  const [busy, setBusy] = useState(false);
  const go = async (e: SubmitEvent) => {
    e.preventDefault();
    // Orders of the shows that start in the days (decision 0460), or the
    // journals of the organisation's shows posted in them (decision 0464).
    const kind = e.submitter?.id === "export-period-ledger" ? ExportKind.LEDGER : ExportKind.ORDERS;
    setBusy(true);
    try {
      const end = dhakaTimestamp(`${to}T00:00`);
      await saveExport(api, { organizationId: org, kind, language: lang,
        periodStart: dhakaTimestamp(`${from}T00:00`), periodEnd: { seconds: end.seconds + 86400n, nanos: 0 } });
    } catch (err) {
      onError(sayError(err, lang));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="inline console-exports" id="period-export" onSubmit={go} aria-busy={busy}>
      {w.periodOrders}:{" "}
      <label>{w.fromDay} <input id="period-from" type="date" required value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} /></label>{" "}
      <label>{w.toDay} <input id="period-to" type="date" required value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} /></label>{" "}
      <button type="submit" id="export-period" disabled={busy}>{w.periodOrdersFile}</button>{" "}
      <button type="submit" id="export-period-ledger" disabled={busy}>{w.periodLedgerFile}</button>
      {busy && <span role="status"> {w.exporting}</span>}
    </form>
  );
}

/**
 * A show's files (decision 0449): its orders and its ledger statement,
 * streamed by ExportSales a piece at a time, and its tickets (the
 * manifest), in the console's language.
 */
function Exports(props: { lang: Lang; api: Api; show: bigint; onError: (s: string) => void }) {
  const { lang, api, show } = props;
  const w = WORDS[lang];
  const [busy, setBusy] = useState(false);
  const run = async (get: () => Promise<void>) => {
    setBusy(true);
    try {
      await get();
    } catch (err) {
      props.onError(sayError(err, lang));
    } finally {
      setBusy(false);
    }
  };
  const sales = (kind: ExportKind) => run(() => saveExport(api, { showId: show, kind, language: lang }));
  const tickets = () => run(async () => {
    const f = await api.manifest.exportManifest({ showId: show, language: lang });
    save(f.filename, f.contentType, [f.data as Uint8Array<ArrayBuffer>]);
  });
  return (
    <p class="console-exports" aria-busy={busy}>
      {w.exports}:{" "}
      <button type="button" id="export-orders" disabled={busy} onClick={() => void sales(ExportKind.ORDERS)}>{w.exportOrders}</button>{" "}
      <button type="button" id="export-tickets" disabled={busy} onClick={() => void tickets()}>{w.exportTickets}</button>{" "}
      <button type="button" id="export-ledger" disabled={busy} onClick={() => void sales(ExportKind.LEDGER)}>{w.exportLedger}</button>
      {busy && <span role="status"> {w.exporting}</span>}
    </p>
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
  const act = acting(load, onError, lang);
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
      k === "role" ? roleWord(w, String(x)) : k.endsWith("_minor") ? taka(BigInt(Math.round(Number(x))), lang)
        : k.endsWith("_at") && typeof x === "string" ? showTime(undefined, new Date(x), lang) : `${k}: ${String(x) || "—"}`).join(", ") : "";
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

const SETTLE_METHODS = [
  [SettlementMethod.CASH, "cash"], [SettlementMethod.BANK_TRANSFER, "bank"], [SettlementMethod.MFS, "mfs"],
] as const;

/**
 * The admins' refund desk (decision 0448): the four-eyes queue of large
 * refunds, approved by an admin other than the one who asked (the API and
 * the database refuse the asker, R-10); the refunds the gateway failed,
 * owed to buyers until settled another way; and a refund by hand. Refunds
 * are the platform's, not one organisation's: the tab lists them all.
 */
function Refunds({ lang, api, onError }: PartProps) {
  const w = WORDS[lang];
  const me = loadSession()?.userId;
  const [waiting, setWaiting] = useState<RefundToApprove[]>();
  const [failed, setFailed] = useState<FailedRefund[]>();
  const [settling, setSettling] = useState<string>();
  const [settle, setSettle] = useState({ method: SettlementMethod.CASH, reference: "", note: "" });
  const [manual, setManual] = useState({ paymentId: "", taka: "", note: "" });
  const [done, setDone] = useState("");
  const load = async () => {
    try {
      const [a, f] = await Promise.all([api.ledger.listRefundsToApprove({ pageSize: 200 }), api.ledger.listFailedRefunds({ pageSize: 200 })]);
      setWaiting(a.refunds);
      setFailed(f.refunds);
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  useEffect(() => void load(), []);
  const act = acting(load, onError, lang);
  const settleIt = async (e: Event) => {
    e.preventDefault();
    if (await act(() => api.ledger.settleFailedRefund({ refundId: settling!, method: settle.method,
      reference: settle.reference.trim(), note: settle.note.trim() }))) setSettling(undefined);
  };
  const refundIt = async (e: Event) => {
    e.preventDefault();
    setDone("");
    await act(async () => {
      const r = await api.payment.refundPayment({ paymentId: manual.paymentId.trim(),
        amountMinor: BigInt(Math.round(Number(manual.taka) * 100)), note: manual.note.trim() });
      setDone(`${w.manualDone} ${r.refund?.refundId} (${w.refundStatuses[r.refund?.status ?? RefundStatus.UNSPECIFIED]})`);
      setManual({ paymentId: "", taka: "", note: "" });
    });
  };
  const money = (m: { amountMinor: bigint } | undefined) => taka(m?.amountMinor ?? 0n, lang);
  const text = (k: keyof typeof manual) => (e: Event) => setManual({ ...manual, [k]: (e.target as HTMLInputElement).value });
  return (
    <>
      {!!waiting?.length && (
      <table class="console-table" id="refunds-waiting">
        <caption>{w.toApprove}</caption>
        <thead><tr><th scope="col">{w.refund}</th><th scope="col">{w.show}</th><th scope="col">{w.order}</th><th scope="col">{w.amount}</th>
          <th scope="col">{w.askedBy}</th><th scope="col">{w.why}</th><th scope="col">{w.at}</th><th scope="col" /></tr></thead>
        <tbody>
          {waiting?.map(({ refund: r, showId }) => r && (
            <tr key={r.refundId} id={`waiting-${r.refundId}`}>
              <th scope="row">{r.refundId}</th><td>{digits(String(showId), lang)}</td><td>{r.orderId}</td><td>{money(r.amount)}</td>
              <td>{r.requestedBy}</td><td>{r.note}</td><td>{showTime(undefined, tsDate(r.createdAt), lang)}</td>
              <td>{r.requestedBy === me ? <span class="note">{w.yoursWaits}</span> : (
                <button type="button" id={`approve-${r.refundId}`} aria-label={`${w.approve}: ${r.refundId}`}
                  onClick={() => void act(() => api.payment.approveRefund({ refundId: r.refundId }))}>{w.approve}</button>
              )}</td>
            </tr>
          ))}
        </tbody>
      </table>
      )}
      {waiting?.length === 0 && <p class="note" id="refunds-none-waiting">{w.noneToApprove}</p>}
      {!!failed?.length && (
      <table class="console-table" id="refunds-failed">
        <caption>{w.failedRefunds}</caption>
        <thead><tr><th scope="col">{w.refund}</th><th scope="col">{w.show}</th><th scope="col">{w.order}</th><th scope="col">{w.amount}</th>
          <th scope="col">{w.gatewaySaid}</th><th scope="col">{w.at}</th><th scope="col" /></tr></thead>
        <tbody>
          {failed?.map((f) => f.refund && (
            <tr key={f.refund.refundId} id={`failed-${f.refund.refundId}`}>
              <th scope="row">{f.refund.refundId}</th><td>{digits(String(f.showId), lang)}</td><td>{f.refund.orderId}</td>
              <td>{money(f.refund.amount)}</td><td>{f.lastError}</td><td>{showTime(undefined, tsDate(f.failedAt), lang)}</td>
              <td>{settling === f.refund.refundId ? (
                <form onSubmit={settleIt} class="inline">
                  <label>{w.method}{" "}
                    <select id="settle-method" value={settle.method}
                      onChange={(e) => setSettle({ ...settle, method: Number((e.target as HTMLSelectElement).value) as SettlementMethod })}>
                      {SETTLE_METHODS.map(([m, k]) => <option key={m} value={m}>{w.methods[k]}</option>)}
                    </select>
                  </label>{" "}
                  <label>{w.reference} <input id="settle-reference" required maxLength={100} value={settle.reference}
                    onInput={(e) => setSettle({ ...settle, reference: (e.target as HTMLInputElement).value })} /></label>{" "}
                  <label>{w.settleNote} <input id="settle-note" maxLength={500} value={settle.note}
                    onInput={(e) => setSettle({ ...settle, note: (e.target as HTMLInputElement).value })} /></label>{" "}
                  <button type="submit" id="settle-confirm">{w.settle}</button>
                </form>
              ) : (
                <button type="button" id={`settle-${f.refund.refundId}`} onClick={() => setSettling(f.refund!.refundId)}>{w.settle}</button>
              )}</td>
            </tr>
          ))}
        </tbody>
      </table>
      )}
      {failed?.length === 0 && <p class="note" id="refunds-none-failed">{w.noneFailed}</p>}
      <form onSubmit={refundIt} aria-labelledby="refund-manual">
        <h2 id="refund-manual">{w.manual}</h2>
        <label>{w.payment} <input id="manual-payment" required maxLength={64} value={manual.paymentId} onInput={text("paymentId")} /></label>{" "}
        <label>{w.amountTaka} <input id="manual-amount" required type="number" min="0.01" step="0.01" value={manual.taka} onInput={text("taka")} /></label>{" "}
        <label>{w.manualNote} <input id="manual-note" required maxLength={500} value={manual.note} onInput={text("note")} /></label>{" "}
        <button type="submit" id="manual-send">{w.manualSend}</button>
        {done && <p role="status" id="manual-done">{done}</p>}
      </form>
    </>
  );
}

/**
 * The platform's partners (admins; decision 0453): each one's commission
 * and what it may sell; opened, its API keys (made here, the secret shown
 * once; revoked), its webhook endpoints with their delivery health, each
 * one's delivery log (webhooks.tsx) and enabling a disabled one, and its
 * statement of this month.
 */
function Partners({ lang, api, onError }: PartProps) {
  const w = WORDS[lang];
  const [partners, setPartners] = useState<Partner[]>();
  const [next, setNext] = useState("");
  const [open, setOpen] = useState<Partner>();
  const read = async (pageToken: string) => {
    try {
      const r = await api.partner.listPartners({ pageSize: 100, pageToken });
      setPartners((cur) => (pageToken ? [...(cur ?? []), ...r.partners] : r.partners));
      setNext(r.nextPageToken);
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  useEffect(() => void read(""), []);
  if (!partners) return null;
  if (partners.length === 0) return <p class="note">{w.noPartners}</p>;
  return (
    <>
      {open && <PartnerPanel key={String(open.partnerId)} lang={lang} api={api} partner={open} onClose={() => setOpen(undefined)} onError={onError} />}
      <table class="console-table" id="console-partners">
        <caption>{w.partnersTab}</caption>
        <thead><tr><th scope="col">{w.partner}</th><th scope="col">{w.commissionRate}</th><th scope="col">{w.sells}</th>
          <th scope="col">{w.added}</th><th scope="col" /></tr></thead>
        <tbody>
          {partners.map((p) => (
            <tr key={String(p.partnerId)} id={`partner-${p.partnerId}`}>
              <th scope="row">{p.name} ({digits(String(p.partnerId), lang)})</th>
              <td>{digits((p.commissionBps / 100).toFixed(2), lang)}%</td>
              <td>{p.sellsEveryShow ? w.everyShow : `${w.orgsAndShows}: ${[...p.allowedOrganizationIds, ...p.allowedShowIds.map(String)].join(", ")}`}</td>
              <td>{showTime(undefined, tsDate(p.createdAt), lang)}</td>
              <td><button type="button" id={`open-partner-${p.partnerId}`} onClick={() => setOpen(p)}>{w.open}</button></td>
            </tr>
          ))}
        </tbody>
      </table>
      {next && <button type="button" id="partners-more" onClick={() => void read(next)}>{w.older}</button>}
    </>
  );
}

/** A partner opened: its keys, its endpoints' health and this month's statement. */
function PartnerPanel(props: { lang: Lang; api: Api; partner: Partner; onClose: () => void; onError: (s: string) => void }) {
  const { lang, api, partner } = props;
  const w = WORDS[lang];
  const id = partner.partnerId;
  const [keys, setKeys] = useState<ApiKey[]>();
  const [endpoints, setEndpoints] = useState<WebhookEndpoint[]>();
  const [statement, setStatement] = useState<Statement>();
  const [name, setName] = useState("");
  const [scope, setScope] = useState(ApiKeyScope.READ_ONLY);
  const [secret, setSecret] = useState("");
  const [log, setLog] = useState<WebhookEndpoint>();
  const load = async () => {
    try {
      // This month in Bangladesh time (UTC+6).
      const now = new Date(Date.now() + 6 * 3600_000);
      const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 6 * 3600_000;
      const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - 6 * 3600_000;
      const ts = (ms: number) => ({ seconds: BigInt(ms / 1000), nanos: 0 });
      const [k, e, s] = await Promise.all([
        api.partner.listApiKeys({ partnerId: id }), api.webhook.listEndpoints({ partnerId: id }),
        api.partner.getStatement({ partnerId: id, periodStart: ts(start), periodEnd: ts(end) }),
      ]);
      setKeys(k.apiKeys);
      setEndpoints(e.endpoints);
      setStatement(s.statement);
    } catch (err) {
      props.onError(sayError(err, lang));
    }
  };
  useEffect(() => void load(), []);
  const act = acting(load, props.onError, lang);
  const make = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const r = await api.partner.createApiKey({ partnerId: id, name: name.trim(), scope });
      setSecret(r.secret);
      setName("");
    });
  };
  const money = (m: { amountMinor: bigint } | undefined) => taka(m?.amountMinor ?? 0n, lang);
  return (
    <section class="console-sales" id="partner-panel" aria-labelledby="partner-title">
      <h2 id="partner-title">{partner.name}</h2>
      <button type="button" id="partner-close" onClick={props.onClose}>{w.close}</button>
      <table class="console-table" id="partner-keys">
        <caption>{w.keys}</caption>
        <thead><tr><th scope="col">{w.keyName}</th><th scope="col">{w.scope}</th><th scope="col">{w.key}</th>
          <th scope="col">{w.lastUsed}</th><th scope="col">{w.revoked}</th><th scope="col" /></tr></thead>
        <tbody>
          {keys?.map((k) => (
            <tr key={k.keyId} id={`key-${k.keyId}`}>
              <th scope="row">{k.name || k.keyId}</th><td>{w.scopes[k.scope] ?? ""}</td><td><code>{k.prefix}…{k.last4}</code></td>
              <td>{k.lastUsedAt ? showTime(undefined, tsDate(k.lastUsedAt), lang) : ""}</td>
              <td>{k.revokedAt ? showTime(undefined, tsDate(k.revokedAt), lang) : ""}</td>
              <td>{!k.revokedAt && (
                <button type="button" class="danger" id={`revoke-${k.keyId}`} aria-label={`${w.revoke}: ${k.name || k.keyId}`}
                  onClick={() => void act(() => api.partner.revokeApiKey({ keyId: k.keyId }))}>{w.revoke}</button>
              )}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form class="inline" onSubmit={make} aria-labelledby="key-new">
        <h3 id="key-new">{w.newKey}</h3>
        <label>{w.keyName} <input id="key-name" maxLength={100} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} /></label>{" "}
        <label>{w.scope}{" "}
          <select id="key-scope" value={scope} onChange={(e) => setScope(Number((e.target as HTMLSelectElement).value) as ApiKeyScope)}>
            {[ApiKeyScope.READ_ONLY, ApiKeyScope.BOOKING, ApiKeyScope.WEBHOOKS].map((x) => <option key={x} value={x}>{w.scopes[x]}</option>)}
          </select>
        </label>{" "}
        <button type="submit" id="key-make">{w.makeKey}</button>
      </form>
      {secret && <p role="status" id="key-secret">{w.secretOnce}: <code>{secret}</code></p>}
      {endpoints?.length === 0 ? <p class="note" id="partner-no-endpoints">{w.noEndpoints}</p> : (
        <table class="console-table" id="partner-endpoints">
          <caption>{w.endpoints}</caption>
          <thead><tr><th scope="col">{w.url}</th><th scope="col">{w.health}</th><th scope="col" /></tr></thead>
          <tbody>
            {endpoints?.map((e) => (
              <tr key={String(e.endpointId)} id={`endpoint-${e.endpointId}`}>
                <th scope="row">{e.url}</th>
                <td class="health">{e.status === EndpointStatus.DISABLED ? `${w.disabled}: ${e.disabledReason}` : w.active}
                  {e.consecutiveFailures > 0 && ` · ${digits(e.consecutiveFailures, lang)} ${w.failures}` +
                    (e.failingSince ? ` ${w.since} ${showTime(undefined, tsDate(e.failingSince), lang)}` : "")}</td>
                <td>
                  <button type="button" id={`deliveries-${e.endpointId}`} aria-label={`${w.deliveries}: ${e.url}`}
                    onClick={() => setLog(e)}>{w.deliveries}</button>{" "}
                  {e.status === EndpointStatus.DISABLED && (
                    <button type="button" id={`enable-${e.endpointId}`} aria-label={`${w.enable}: ${e.url}`}
                      onClick={() => void act(() => api.webhook.enableEndpoint({ endpointId: e.endpointId }))}>{w.enable}</button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {log && <EndpointDeliveries key={String(log.endpointId)} lang={lang} api={api.webhook} endpoint={log}
        onClose={() => setLog(undefined)} onError={props.onError} />}
      <h3>{w.statement}</h3>
      {statement?.lines.length === 0 && <p class="note">{w.noLines}</p>}
      {statement?.lines.map((l) => (
        <dl class="console-money" key={l.currency} id={`statement-${l.currency}`}>
          <dt>{w.salesCount}</dt><dd>{digits(String(l.salesCount), lang)} · {money(l.sales)}</dd>
          <dt>{w.refundsCount}</dt><dd>{digits(String(l.refundsCount), lang)} · {money(l.refunds)}</dd>
          <dt>{w.net}</dt><dd>{money(l.net)}</dd>
          <dt>{w.commissionRate}</dt><dd class="commission">{money(l.commission)}</dd>
        </dl>
      ))}
    </section>
  );
}
