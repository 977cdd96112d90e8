// Bengali and English: the strings a buyer reads, digits, taka and times.
// The language is remembered in localStorage; money comes in minor units
// (paisa) as bigint and is never turned into a float.
import { Code, FailureReason } from "@seatghor/client";

export type Lang = "en" | "bn";

const LANG_KEY = "seatghor.lang";

export function savedLang(): Lang {
  try {
    return localStorage.getItem(LANG_KEY) === "bn" ? "bn" : "en";
  } catch {
    return "en";
  }
}

export function saveLang(lang: Lang): void {
  try {
    localStorage.setItem(LANG_KEY, lang);
  } catch {
    // private mode: the choice lasts this page only
  }
}

const bnDigits = "০১২৩৪৫৬৭৮৯";

/** Writes the ASCII digits of s in Bengali digits in the Bengali UI. */
export function digits(s: string | number | bigint, lang: Lang): string {
  const t = String(s);
  return lang === "bn" ? t.replace(/[0-9]/g, (d) => bnDigits[Number(d)]) : t;
}

/** Groups a whole number the South Asian way: 12,34,567. */
function group(whole: bigint): string {
  const s = whole.toString();
  if (s.length <= 3) return s;
  const head = s.slice(0, -3);
  const tail = s.slice(-3);
  return head.replace(/\B(?=(\d{2})+(?!\d))/g, ",") + "," + tail;
}

/** Formats minor units (paisa) as taka: ৳1,250 or ৳1,250.50. */
export function taka(minor: bigint, lang: Lang): string {
  const neg = minor < 0n;
  const abs = neg ? -minor : minor;
  const paisa = abs % 100n;
  let s = "৳" + group(abs / 100n);
  if (paisa !== 0n) s += "." + paisa.toString().padStart(2, "0");
  return (neg ? "−" : "") + digits(s, lang);
}

/** The zone of times the server gives no show zone for (decision 0170). */
export const SHOW_ZONE = "Asia/Dhaka";

/** The zones buyers meet, said in words (decision 0307); any other zone
 * is said by the browser's long name of it. */
const ZONE_WORDS: Record<string, { en: string; bn: string }> = {
  "Asia/Dhaka": { en: "Bangladesh time", bn: "বাংলাদেশ সময়" },
  "Asia/Kolkata": { en: "India time", bn: "ভারতের সময়" },
};

function zoneWords(zone: string, lang: Lang, d: Date): string {
  const known = ZONE_WORDS[zone];
  if (known) return known[lang];
  const part = new Intl.DateTimeFormat(lang === "bn" ? "bn-BD" : "en-GB", { timeZone: zone, timeZoneName: "long" })
    .formatToParts(d).find((p) => p.type === "timeZoneName");
  return part?.value ?? zone;
}

/** The Bengali period of the day for an hour 0–23, as people say it:
 * ভোর before sunrise, সকাল in the morning, দুপুর at midday, বিকাল in the
 * afternoon, সন্ধ্যা at dusk, রাত at night (decision 0307). */
function bnPeriod(hour: number): string {
  if (hour >= 4 && hour < 6) return "ভোর";
  if (hour >= 6 && hour < 12) return "সকাল";
  if (hour >= 12 && hour < 15) return "দুপুর";
  if (hour >= 15 && hour < 18) return "বিকাল";
  if (hour >= 18 && hour < 20) return "সন্ধ্যা";
  return "রাত";
}

/** The time of day of d in zone: "সকাল ৮:০০" in Bengali, "8:00 AM" in
 * English. */
export function clock(d: Date, lang: Lang, zone: string = SHOW_ZONE): string {
  const parts = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: zone }).formatToParts(d);
  const hour = Number(parts.find((p) => p.type === "hour")?.value ?? 0) % 24;
  const minute = parts.find((p) => p.type === "minute")?.value ?? "00";
  const h12 = hour % 12 === 0 ? 12 : hour % 12;
  return lang === "bn" ? `${bnPeriod(hour)} ${digits(`${h12}:${minute}`, lang)}` : `${h12}:${minute} ${hour < 12 ? "AM" : "PM"}`;
}

/** Date and time of d as read in zone, with the zone in words:
 * "শনি, ২ জানু, ২০২৭, সকাল ৮:০০ (বাংলাদেশ সময়)" or
 * "Sat, 2 Jan 2027, 8:00 AM (Bangladesh time)". */
export function when(d: Date | undefined, lang: Lang, zone: string = SHOW_ZONE): string {
  if (!d) return "";
  const day = new Intl.DateTimeFormat(lang === "bn" ? "bn-BD" : "en-GB", {
    weekday: "short", day: "numeric", month: "short", year: "numeric", timeZone: zone,
  }).format(d);
  return `${digits(day, lang)}, ${clock(d, lang, zone)} (${zoneWords(zone, lang, d)})`;
}

/** A show's time (or any instant of it) in the show's own zone, which the
 * LocalTime fields name (decision 0170); SHOW_ZONE without one. The one
 * way every page writes a time a buyer reads (decision 0307). */
export function showTime(local: { timeZone: string } | undefined, d: Date | undefined, lang: Lang): string {
  return when(d, lang, local?.timeZone || SHOW_ZONE);
}

/** What a show is called in the UI's language: in the Bengali UI its
 * Bengali title (Show.title_bn, decision 0385) when it has one, else a bus
 * trip by its route in Bengali (its title is written in English by its
 * operator, "Dhaka to Chattogram 08:00"), else the title as written. */
export function showName(
  title: string,
  x: { originBengali?: string; destinationBengali?: string; titleBn?: string },
  lang: Lang,
): string {
  if (lang !== "bn") return title;
  if (x.titleBn) return x.titleBn;
  return x.originBengali && x.destinationBengali ? `${x.originBengali} → ${x.destinationBengali}` : title;
}

/** Who runs a show in the UI's language: its operator's Bengali name
 * (Show.operator_bn) in the Bengali UI, when it has one. */
export function operatorName(x: { operator: string; operatorBn?: string }, lang: Lang): string {
  return (lang === "bn" && x.operatorBn) || x.operator;
}

/** A section's name in the UI's language: its Bengali name from the show
 * (Section.name_bn) in the Bengali UI, when it has one (decision 0306). */
export function sectionName(name: string, show: { sections: { name: string; nameBn: string }[] } | undefined, lang: Lang): string {
  return (lang === "bn" && show?.sections.find((x) => x.name === name)?.nameBn) || name;
}

/** The places a show or ticket is about, in the UI's language: a bus
 * trip's route (the gazetteer's Bengali names in the Bengali UI, the
 * names as entered where it has none), else the venue (its Bengali name,
 * Show.venue_bn, in the Bengali UI when it has one). */
export function route(
  x: { origin: string; destination: string; venue: string; originBengali?: string; destinationBengali?: string; venueBn?: string },
  lang: Lang,
): string {
  if (!x.origin) return (lang === "bn" && x.venueBn) || x.venue;
  const from = (lang === "bn" && x.originBengali) || x.origin;
  const to = (lang === "bn" && x.destinationBengali) || x.destination;
  return `${from} → ${to}`;
}

/** m:ss of a number of seconds, in the UI's digits. */
export function mmss(seconds: number, lang: Lang): string {
  const s = Math.max(0, Math.floor(seconds));
  return digits(`${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`, lang);
}

const en = {
  brand: "Seatghor",
  tagline: "Bus seats and event tickets",
  navSearch: "Search",
  navTickets: "My tickets",
  navGate: "Gate",
  signIn: "Sign in",
  signOut: "Sign out",
  signedInAs: "Signed in as",
  switchLang: "বাংলা",
  switchLangLabel: "বাংলায় দেখুন (switch to Bengali)",
  searchTrips: "Find a bus",
  origin: "From",
  destination: "To",
  date: "Date",
  search: "Search",
  searching: "Searching…",
  noTrips: "No trips found. Check the spelling or try another date.",
  degraded: "Search is partly unavailable; the results may be incomplete.",
  events: "Events",
  noEvents: "No events on sale.",
  signInForEvents: "Sign in to see events and choose seats.",
  seatsLeft: (n: string) => `${n} seats left`,
  from: (p: string) => `from ${p}`,
  choose: "Choose seats",
  departs: "Departs",
  boards: "Boards",
  arrives: "Arrives",
  dropsAt: "Drops at",
  boardingCounter: "Boarding counter",
  droppingCounter: "Dropping counter",
  onCoach: (route: string) => `On the ${route} coach`,
  fare: (p: string) => `Fare ${p}`,
  starts: "Starts",
  loading: "Loading…",
  legend: "Legend",
  free: "free",
  held: "held by others",
  sold: "sold",
  selected: "selected",
  yours: "your hold",
  seat: "Seat",
  seatsOf: (section: string) => `Seats of ${section}`,
  sections: "Sections",
  priceEach: (p: string) => `${p} each`,
  yourSeats: "Your selection",
  noSeatsChosen: "No seats chosen yet. Use the seat map; arrow keys move between seats, Enter or Space chooses.",
  total: "Total",
  holdSeats: (n: string) => `Hold ${n} seats`,
  holdOne: "Hold 1 seat",
  quantity: "How many",
  holdPlaces: "Hold places",
  placesLeft: (n: string) => (n === "1" ? "1 place left" : `${n} places left`),
  soldOut: "Sold out",
  heldFor: "Your seats are held for",
  holdExpired: "Your hold has expired. Choose your seats again.",
  continueToPay: "Continue to payment",
  release: "Release",
  taken: (seats: string) => `Sorry, ${seats} was just taken by someone else. Your other seats are still chosen.`,
  refreshed: "Seat map updated",
  zoomIn: "Zoom in",
  zoomOut: "Zoom out",
  wholeMap: "Whole map",
  mapHelp: "Seat map. Drag it or use the arrow keys to move it, + and − to zoom; tap a seat to zoom in there, then to choose it. The seats are in the grids of each section.",
  order: "Order",
  payBy: "Pay within",
  pay: "Pay",
  payTest: "Pay with test card (tok_success)",
  payDecline: "Test a declined card (tok_decline)",
  payRedirect: "Pay on the gateway's page",
  testPaymentsNote: "Dev mode: the sandbox gateway takes test tokens; no money moves.",
  paying: "Payment in progress…",
  paymentFailed: (why: string) => `The payment failed (${why}). You can try again.`,
  paid: "Paid. Your tickets are confirmed.",
  orderExpired: "This order has expired unpaid.",
  orderCancelled: "This order is cancelled.",
  orderRefunded: "This order was refunded.",
  seeTickets: "See my tickets",
  tickets: "My tickets",
  noTickets: "No tickets yet.",
  offline: "You are offline. The tickets seen on this phone are still here.",
  needsNetwork: "This page needs the network: seats, holds and payments are live. Connect and try again.",
  offlineError: "No connection: this needs the network. Try again when you are online.",
  savedCopy: (when: string) => `Offline: your tickets as saved on this phone at ${when}.`,
  ticketsPending: "Your tickets are being issued…",
  showQR: "QR code of the ticket",
  pdfPreparing: "The PDF is being prepared…",
  cancelOrder: "Cancel this order",
  cancelConfirm: "Confirm cancellation",
  keepOrder: "Keep it",
  cancelTerms: (refund: string, fee: string, pct: string) => `You get ${refund} back; the cancellation fee is ${fee} (${pct}%).`,
  cancelMoved: (refund: string) => `The show moved after you paid: you get all ${refund} back, no fee.`,
  statusCancelled: "Cancelled by its operator. Paid tickets are refunded in full.",
  statusDelayed: (was: string) => `Delayed to the time above; it was ${was}.`,
  statusReason: (reason: string) => `Reason: ${reason}`,
  statusLeft: "The coach has left its first stop; seats from later stops may still be on sale.",
  statusOver: "This has started or the coach has arrived: sales have ended.",
  cancelled: (refund: string) => `Cancelled. ${refund} is being refunded.`,
  status: {
    valid: "valid",
    checkedIn: "checked in",
    cancelled: "cancelled",
    refunded: "refunded",
  },
  waitTitle: "You are in the waiting room",
  waitPlace: (n: string) => `Your place in line: ${n}`,
  waitEta: (m: string) => `Expected wait: about ${m} min`,
  waitOpens: (t: string) => `The sale opens at ${t}. Everyone who joins before then gets a random place.`,
  waitPaused: "The sale is paused for a moment.",
  waitKeep: "Keep this page open; it moves on by itself.",
  youAreIn: "You are in! Taking you to the seat map…",
  saleEnded: "The sale has ended.",
  devSignIn: "Dev sign-in",
  devSignInNote: "For development only: pick any name and role and get a token. No password.",
  name: "Name",
  role: "Role",
  roleUser: "Buyer",
  roleOperator: "Operator or gate staff",
  roleAdmin: "Admin",
  signInWithProvider: "Sign in with your account",
  noSignIn: "Sign-in is not configured on this server.",
  signOutToSwitch: "Sign out first to sign in as someone else.",
  needSignIn: "Please sign in first.",
  error: "Something went wrong",
  retry: "Try again",
  back: "Back",
  closeX: "Close",
  errorUnknown: "Something went wrong. Try again.",
  errorCode: (c: Code): string => {
    switch (c) {
      case Code.Unavailable:
        return "The server could not be reached; check the connection.";
      case Code.DeadlineExceeded:
        return "It took too long.";
      case Code.NotFound:
        return "What was asked for was not found.";
      case Code.PermissionDenied:
        return "Your account may not do this.";
      case Code.Unauthenticated:
        return "Please sign in again.";
      case Code.InvalidArgument:
        return "Some of what was sent is not right.";
      case Code.FailedPrecondition:
      case Code.Aborted:
        return "It cannot be done right now; refresh the page.";
      case Code.ResourceExhausted:
        return "Too many tries; wait a moment.";
      default:
        return "";
    }
  },
  orderPdf: (n: string) => `PDF of this order (${n} tickets)`,
  paymentFailure: (r: FailureReason): string => {
    switch (r) {
      case FailureReason.DECLINED:
        return "the card was declined";
      case FailureReason.INSUFFICIENT_FUNDS:
        return "not enough money in the account";
      case FailureReason.CANCELLED_BY_BUYER:
        return "cancelled on the payment page";
      case FailureReason.TIMED_OUT:
        return "the payment took too long";
      case FailureReason.RISK_REJECTED:
        return "the payment provider refused it";
      case FailureReason.TOO_MANY_ATTEMPTS:
        return "too many attempts";
      default:
        return "the payment provider had a problem";
    }
  },
  // Live holds and unpaid orders in "My tickets"; the per-account cap
  // (decisions 0301, 0302).
  liveHolds: "Held seats and unpaid orders",
  holdLeft: (left: string) => `Held for ${left} more`,
  unpaidLeft: (left: string) => `Unpaid order: pay within ${left}`,
  released: "Released. The seats are free again.",
  accountCap: (held: string, max: string) =>
    `You already hold or bought ${held} of the ${max} seats one account may have for this show. Release a hold or finish an order in My tickets.`,
  // The seat map's conflict message, said from the choice as it is now so
  // it never contradicts the panel below it (decision 0310).
  takenNoneLeft: (seats: string) => `Sorry, ${seats} was just taken by someone else. Choose another seat.`,
  takenMany: (seats: string, rest: boolean) =>
    `Sorry, ${seats} were just taken by someone else.${rest ? " Your other seats are still chosen." : " Choose other seats."}`,
  alreadyYours: (seats: string) => `${seats} is already in your hold below.`,
  // Who travels on each seat of a bus trip (decisions 0380, 0382).
  passengersTitle: "Who is travelling",
  passengersNote: "Name each passenger as on their national ID card or passport, with a mobile number for news of the trip.",
  passengerOf: (seat: string) => `Seat ${seat}`,
  passengerName: "Full name",
  passengerPhone: "Mobile number",
  passengerPhoneHint: "A Bangladeshi mobile, e.g. 01711-234567",
  passengerWoman: "The passenger is a woman",
  passengerWomanSeat: "Seat for women: the passenger is a woman.",
  passengerLabel: "Passenger",
  needName: "Write the passenger's name.",
  nameTooLong: "A name has at most 100 letters.",
  badPhone: "Write a Bangladeshi mobile number: 01, then 9 digits, like 01711-234567.",
  fixBelow: (n: string) => (n === "1" ? "Please correct the field marked below." : `Please correct the ${n} fields marked below.`),
  // The coach as it is, and seats for women (decisions 0371, 0373).
  front: "Front",
  aisle: "Aisle",
  decks: "Decks",
  deck: (n: string) => `Deck ${n}`,
  kinds: { women: "for women", business: "business", sleeper: "sleeper berth", wheelchair: "wheelchair place", blocked: "crew, not for sale" },
  features: { driver: "Driver", door: "Door", stairs: "Stairs", toilet: "Toilet" },
  womenTitle: "Seats for women",
  womenNote: "These seats are sold to women passengers only.",
  womanDeclare: (seat: string) => `The passenger of seat ${seat} is a woman`,
  womenUndeclared: (seats: string) => `${seats}: a seat for women. Confirm that its passenger is a woman to hold it.`,
  // A guest's checkout and finding tickets by ticket number (decision
  // 0437); the pages of their own (phone.tsx, find.tsx) keep their words.
  guest: "Guest",
  continueAsGuest: "Continue as guest",
  findByNumber: "Find tickets by ticket number",
  ticketNumber: "Ticket number",
  contactPhone: "Mobile number for the tickets",
  contactNote: "Your tickets are sent to this number by SMS; find them with the ticket number and this number.",
  contactPhoneOptional: "Mobile number for an SMS of the tickets (optional)",
  contactEmail: "E-mail for the tickets (optional)",
  badEmail: "Write an e-mail address like name@example.com, or leave it empty.",
};

export type Strings = typeof en;

const bn: Strings = {
  brand: "সিটঘর",
  tagline: "বাসের আসন আর অনুষ্ঠানের টিকিট",
  navSearch: "খুঁজুন",
  navTickets: "আমার টিকিট",
  navGate: "গেট",
  signIn: "সাইন ইন",
  signOut: "সাইন আউট",
  signedInAs: "সাইন ইন করেছেন",
  switchLang: "English",
  switchLangLabel: "Show in English (ইংরেজিতে দেখুন)",
  searchTrips: "বাস খুঁজুন",
  origin: "কোথা থেকে",
  destination: "কোথায়",
  date: "তারিখ",
  search: "খুঁজুন",
  searching: "খোঁজা হচ্ছে…",
  noTrips: "কোনো যাত্রা পাওয়া যায়নি। বানান দেখুন বা অন্য তারিখ চেষ্টা করুন।",
  degraded: "খোঁজ আংশিক চালু; ফল অসম্পূর্ণ হতে পারে।",
  events: "অনুষ্ঠান",
  noEvents: "বিক্রিতে কোনো অনুষ্ঠান নেই।",
  signInForEvents: "অনুষ্ঠান দেখতে ও আসন বাছতে সাইন ইন করুন।",
  seatsLeft: (n) => `${n}টি আসন বাকি`,
  from: (p) => `${p} থেকে`,
  choose: "আসন বাছুন",
  departs: "ছাড়বে",
  boards: "ওঠার সময়",
  arrives: "পৌঁছাবে",
  dropsAt: "নামার স্থান",
  boardingCounter: "ওঠার কাউন্টার",
  droppingCounter: "নামার কাউন্টার",
  onCoach: (route) => `${route} কোচে`,
  fare: (p) => `ভাড়া ${p}`,
  starts: "শুরু",
  loading: "লোড হচ্ছে…",
  legend: "চিহ্ন",
  free: "খালি",
  held: "অন্যের জন্য আটকানো",
  sold: "বিক্রি হয়েছে",
  selected: "বাছাই করা",
  yours: "আপনার জন্য আটকানো",
  seat: "আসন",
  seatsOf: (section) => `${section} অংশের আসন`,
  sections: "অংশ",
  priceEach: (p) => `প্রতিটি ${p}`,
  yourSeats: "আপনার বাছাই",
  noSeatsChosen: "এখনো কোনো আসন বাছা হয়নি। তীর চিহ্নের বোতামে আসন থেকে আসনে যান, এন্টার বা স্পেসে বাছুন।",
  total: "মোট",
  holdSeats: (n) => `${n}টি আসন আটকান`,
  holdOne: "১টি আসন আটকান",
  quantity: "কয়টি",
  holdPlaces: "জায়গা আটকান",
  placesLeft: (n) => `${n}টি জায়গা বাকি`,
  soldOut: "সব বিক্রি হয়ে গেছে",
  heldFor: "আপনার আসন আটকে রাখা আছে আর",
  holdExpired: "আসন আটকে রাখার সময় শেষ। আবার আসন বাছুন।",
  continueToPay: "পেমেন্টে যান",
  release: "ছেড়ে দিন",
  taken: (seats) => `দুঃখিত, ${seats} আসনটি এইমাত্র অন্য কেউ নিয়েছেন। আপনার বাকি আসন বাছাই করা আছে।`,
  refreshed: "আসনের নকশা হালনাগাদ হয়েছে",
  zoomIn: "বড় করে দেখুন",
  zoomOut: "ছোট করে দেখুন",
  wholeMap: "পুরো নকশা",
  mapHelp: "আসনের নকশা। টেনে বা তীর চিহ্নের বোতামে সরান, + ও − বোতামে বড়-ছোট করুন; কোনো আসনে ছুঁলে সেখানে বড় হবে, তারপর ছুঁয়ে বাছুন। প্রতিটি অংশের আসন তার তালিকায় আছে।",
  order: "অর্ডার",
  payBy: "পরিশোধের সময় বাকি",
  pay: "পরিশোধ",
  payTest: "টেস্ট কার্ডে পরিশোধ (tok_success)",
  payDecline: "প্রত্যাখ্যাত কার্ড পরীক্ষা (tok_decline)",
  payRedirect: "গেটওয়ের পাতায় পরিশোধ",
  testPaymentsNote: "ডেভ মোড: স্যান্ডবক্স গেটওয়ে টেস্ট টোকেন নেয়; কোনো টাকা যায় না।",
  paying: "পরিশোধ চলছে…",
  paymentFailed: (why) => `পরিশোধ হয়নি (${why})। আবার চেষ্টা করতে পারেন।`,
  paid: "পরিশোধ হয়েছে। আপনার টিকিট নিশ্চিত।",
  orderExpired: "পরিশোধ না হওয়ায় অর্ডারের মেয়াদ শেষ।",
  orderCancelled: "অর্ডারটি বাতিল।",
  orderRefunded: "অর্ডারের টাকা ফেরত দেওয়া হয়েছে।",
  seeTickets: "আমার টিকিট দেখুন",
  tickets: "আমার টিকিট",
  noTickets: "এখনো কোনো টিকিট নেই।",
  offline: "আপনি অফলাইনে আছেন। এই ফোনে দেখা টিকিটগুলো এখনো আছে।",
  needsNetwork: "এই পাতার জন্য ইন্টারনেট লাগবে: আসন, হোল্ড আর পেমেন্ট সরাসরি চলে। সংযোগ দিয়ে আবার চেষ্টা করুন।",
  offlineError: "সংযোগ নেই: এর জন্য ইন্টারনেট লাগবে। অনলাইনে এসে আবার চেষ্টা করুন।",
  savedCopy: (when) => `অফলাইন: এই ফোনে রাখা আপনার টিকিট, ${when} পর্যন্ত।`,
  ticketsPending: "আপনার টিকিট তৈরি হচ্ছে…",
  showQR: "টিকিটের কিউআর কোড",
  pdfPreparing: "পিডিএফ তৈরি হচ্ছে…",
  cancelOrder: "অর্ডার বাতিল করুন",
  cancelConfirm: "বাতিল নিশ্চিত করুন",
  keepOrder: "রেখে দিন",
  cancelTerms: (refund, fee, pct) => `আপনি ${refund} ফেরত পাবেন; বাতিলের মাশুল ${fee} (${pct}%)।`,
  cancelMoved: (refund) => `আপনি টাকা দেওয়ার পর সময় বদলেছে: পুরো ${refund} ফেরত পাবেন, কোনো মাশুল নেই।`,
  statusCancelled: "আয়োজক বাতিল করেছেন। কেনা টিকিটের পুরো টাকা ফেরত দেওয়া হচ্ছে।",
  statusDelayed: (was) => `দেরি: নতুন সময় ওপরে দেওয়া; আগে ছিল ${was}।`,
  statusReason: (reason) => `কারণ: ${reason}`,
  statusLeft: "কোচ প্রথম স্টপ ছেড়ে গেছে; পরের স্টপ থেকে আসন এখনো বিক্রি হতে পারে।",
  statusOver: "শুরু হয়ে গেছে বা কোচ পৌঁছে গেছে: বিক্রি শেষ।",
  cancelled: (refund) => `বাতিল হয়েছে। ${refund} ফেরত দেওয়া হচ্ছে।`,
  status: {
    valid: "বৈধ",
    checkedIn: "প্রবেশ করেছেন",
    cancelled: "বাতিল",
    refunded: "টাকা ফেরত",
  },
  waitTitle: "আপনি অপেক্ষার ঘরে আছেন",
  waitPlace: (n) => `লাইনে আপনার স্থান: ${n}`,
  waitEta: (m) => `আনুমানিক অপেক্ষা: প্রায় ${m} মিনিট`,
  waitOpens: (t) => `বিক্রি শুরু ${t}-এ। এর আগে যাঁরা যোগ দেবেন, সবাই এলোমেলো স্থান পাবেন।`,
  waitPaused: "বিক্রি কিছুক্ষণের জন্য থেমে আছে।",
  waitKeep: "পাতাটি খোলা রাখুন; নিজে থেকেই এগোবে।",
  youAreIn: "আপনার পালা এসেছে! আসনের নকশায় নিয়ে যাচ্ছি…",
  saleEnded: "বিক্রি শেষ হয়েছে।",
  devSignIn: "ডেভ সাইন-ইন",
  devSignInNote: "শুধু ডেভেলপমেন্টের জন্য: যেকোনো নাম আর ভূমিকা বেছে টোকেন নিন। পাসওয়ার্ড লাগে না।",
  name: "নাম",
  role: "ভূমিকা",
  roleUser: "ক্রেতা",
  roleOperator: "অপারেটর বা গেটকর্মী",
  roleAdmin: "অ্যাডমিন",
  signInWithProvider: "আপনার অ্যাকাউন্টে সাইন ইন",
  noSignIn: "এই সার্ভারে সাইন-ইন চালু নেই।",
  signOutToSwitch: "অন্য কেউ হিসেবে সাইন ইন করতে আগে সাইন আউট করুন।",
  needSignIn: "আগে সাইন ইন করুন।",
  error: "কিছু একটা ভুল হয়েছে",
  retry: "আবার চেষ্টা",
  back: "ফিরে যান",
  closeX: "বন্ধ",
  errorUnknown: "কিছু একটা ভুল হয়েছে। আবার চেষ্টা করুন।",
  errorCode: (c) => {
    switch (c) {
      case Code.Unavailable:
        return "সার্ভারে পৌঁছানো যায়নি; সংযোগ দেখুন।";
      case Code.DeadlineExceeded:
        return "অনেক সময় লেগেছে।";
      case Code.NotFound:
        return "যা চাওয়া হয়েছে তা পাওয়া যায়নি।";
      case Code.PermissionDenied:
        return "আপনার অ্যাকাউন্ট এটি করতে পারে না।";
      case Code.Unauthenticated:
        return "আবার সাইন ইন করুন।";
      case Code.InvalidArgument:
        return "পাঠানো তথ্যের কিছু ঠিক নেই।";
      case Code.FailedPrecondition:
      case Code.Aborted:
        return "এখন এটি করা যাচ্ছে না; পাতাটি আবার লোড করুন।";
      case Code.ResourceExhausted:
        return "অনেকবার চেষ্টা হয়েছে; একটু অপেক্ষা করুন।";
      default:
        return "";
    }
  },
  orderPdf: (n) => `এই অর্ডারের পিডিএফ (${n}টি টিকিট)`,
  paymentFailure: (r) => {
    switch (r) {
      case FailureReason.DECLINED:
        return "কার্ড প্রত্যাখ্যাত হয়েছে";
      case FailureReason.INSUFFICIENT_FUNDS:
        return "অ্যাকাউন্টে যথেষ্ট টাকা নেই";
      case FailureReason.CANCELLED_BY_BUYER:
        return "পরিশোধের পাতায় বাতিল করা হয়েছে";
      case FailureReason.TIMED_OUT:
        return "পরিশোধে অনেক সময় লেগেছে";
      case FailureReason.RISK_REJECTED:
        return "পরিশোধ প্রতিষ্ঠান এটি ফিরিয়ে দিয়েছে";
      case FailureReason.TOO_MANY_ATTEMPTS:
        return "অনেকবার চেষ্টা হয়েছে";
      default:
        return "পরিশোধ প্রতিষ্ঠানে সমস্যা হয়েছে";
    }
  },
  liveHolds: "আটকানো আসন ও অপরিশোধিত অর্ডার",
  holdLeft: (left) => `আর ${left} আটকে থাকবে`,
  unpaidLeft: (left) => `অপরিশোধিত অর্ডার: ${left}-এর মধ্যে পরিশোধ করুন`,
  released: "ছেড়ে দেওয়া হয়েছে। আসনগুলো আবার খালি।",
  accountCap: (held, max) =>
    `একটি অ্যাকাউন্ট এই অনুষ্ঠান বা যাত্রার সর্বোচ্চ ${max}টি আসন রাখতে পারে; আপনি ইতিমধ্যে ${held}টি আটকেছেন বা কিনেছেন। "আমার টিকিট"-এ একটি আটকানো আসন ছেড়ে দিন বা একটি অর্ডার শেষ করুন।`,
  takenNoneLeft: (seats) => `দুঃখিত, ${seats} আসনটি এইমাত্র অন্য কেউ নিয়েছেন। অন্য একটি আসন বাছুন।`,
  takenMany: (seats, rest) =>
    `দুঃখিত, ${seats} আসনগুলো এইমাত্র অন্য কেউ নিয়েছেন।${rest ? " আপনার বাকি আসন বাছাই করা আছে।" : " অন্য আসন বাছুন।"}`,
  alreadyYours: (seats) => `${seats} আসন ইতিমধ্যে নিচে আপনার জন্য আটকানো আছে।`,
  passengersTitle: "কে কে যাচ্ছেন",
  passengersNote: "প্রত্যেক যাত্রীর নাম জাতীয় পরিচয়পত্র বা পাসপোর্টে যেমন আছে তেমন লিখুন, আর যাত্রার খবরের জন্য একটি মোবাইল নম্বর দিন।",
  passengerOf: (seat) => `আসন ${seat}`,
  passengerName: "পুরো নাম",
  passengerPhone: "মোবাইল নম্বর",
  passengerPhoneHint: "বাংলাদেশের মোবাইল নম্বর, যেমন ০১৭১১-২৩৪৫৬৭",
  passengerWoman: "যাত্রী একজন নারী",
  passengerWomanSeat: "নারীদের আসন: যাত্রী একজন নারী।",
  passengerLabel: "যাত্রী",
  needName: "যাত্রীর নাম লিখুন।",
  nameTooLong: "নাম সর্বোচ্চ ১০০ অক্ষরের হতে পারে।",
  badPhone: "বাংলাদেশের একটি মোবাইল নম্বর লিখুন: ০১, তারপর ৯টি অঙ্ক, যেমন ০১৭১১-২৩৪৫৬৭।",
  fixBelow: (n) => `নিচে চিহ্নিত ${n}টি ঘর ঠিক করুন।`,
  front: "সামনে",
  aisle: "মাঝের পথ",
  decks: "তলা",
  deck: (n) => `${n} তলা`,
  kinds: { women: "মহিলা আসন", business: "বিজনেস", sleeper: "স্লিপার বার্থ", wheelchair: "হুইলচেয়ারের জায়গা", blocked: "স্টাফ, বিক্রির জন্য নয়" },
  features: { driver: "চালক", door: "দরজা", stairs: "সিঁড়ি", toilet: "টয়লেট" },
  womenTitle: "মহিলা আসন",
  womenNote: "এই আসনগুলো শুধু মহিলা যাত্রীদের কাছে বিক্রি হয়।",
  womanDeclare: (seat) => `${seat} আসনের যাত্রী একজন মহিলা`,
  womenUndeclared: (seats) => `${seats}: মহিলা আসন। আটকাতে হলে নিশ্চিত করুন যে যাত্রী একজন মহিলা।`,
  guest: "অতিথি",
  continueAsGuest: "অতিথি হিসেবে চালিয়ে যান",
  findByNumber: "টিকিট নম্বর দিয়ে টিকিট খুঁজুন",
  ticketNumber: "টিকিট নম্বর",
  contactPhone: "টিকিটের জন্য মোবাইল নম্বর",
  contactNote: "আপনার টিকিট এসএমএসে এই নম্বরে পাঠানো হবে; টিকিট নম্বর আর এই নম্বর দিয়ে টিকিট খুঁজে পাবেন।",
  contactPhoneOptional: "টিকিটের এসএমএসের জন্য মোবাইল নম্বর (ঐচ্ছিক)",
  contactEmail: "টিকিটের জন্য ই-মেইল (ঐচ্ছিক)",
  badEmail: "name@example.com-এর মতো একটি ই-মেইল ঠিকানা লিখুন, নয়তো খালি রাখুন।",
};

export function strings(lang: Lang): Strings {
  return lang === "bn" ? bn : en;
}

/** A protobuf Timestamp as a Date. */
export function tsDate(ts: { seconds: bigint; nanos: number } | undefined): Date | undefined {
  return ts ? new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6)) : undefined;
}
