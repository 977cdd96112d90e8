// What the site says for each error reason the API documents
// (docs/errors.md), in English and Bengali: sentences for people, never the
// server's message, which is for developers (field names, id formats, rule
// numbers; decision 0303). Record<ErrorReason, …> makes the type check
// fail when the SDK lists a reason with no sentence here, and
// reasons_test.go fails when docs/errors.md does. One reason a line, as
// `REASON: "sentence",`: the Go test reads them so.
import type { ErrorReason } from "@seatghor/client";

/**
 * The reasons only staff, operators, partners and admins meet: their words
 * are in staffreasons.ts, which the staff's bundles (the counter, the
 * manifest, the gate) load, so a buyer's first load carries none of them.
 */
export type StaffReason =
  | "ADMISSION_RATES_INVALID"
  | "ALLOCATION_FORBIDDEN"
  | "API_KEY_MALFORMED"
  | "API_KEY_NOT_FOUND"
  | "API_KEY_READ_ONLY"
  | "API_KEY_REVOKED"
  | "API_KEY_SECRET_SHOWN"
  | "API_KEY_WRONG_MODE"
  | "COUNTER_FORBIDDEN"
  | "COUNTER_REFUND_REFUSED"
  | "COUNTER_SHIFT_CLOSED"
  | "COUNTER_SHIFT_OPEN"
  | "LAYOUT_TEMPLATE_EXISTS"
  | "LAYOUT_TEMPLATE_FORBIDDEN"
  | "LAYOUT_TEMPLATE_INVALID"
  | "LAYOUT_TEMPLATE_NOT_FOUND"
  | "LEDGER_QUERY_INVALID"
  | "MEMBER_NOT_FOUND"
  | "NETWORK_EXISTS"
  | "NETWORK_FORBIDDEN"
  | "NETWORK_INVALID"
  | "NETWORK_VERSION_CONFLICT"
  | "NO_SHOW_REFUSED"
  | "ORGANIZATION_EXISTS"
  | "ORGANIZATION_NOT_FOUND"
  | "PARTNER_ACCESS_FORBIDDEN"
  | "PARTNER_INVALID"
  | "PARTNER_NOT_FOUND"
  | "PARTNER_SHOW_FORBIDDEN"
  | "PAYOUT_EXCEEDS_BALANCE"
  | "PRICE_FROZEN"
  | "SHOW_KEPT"
  | "TRIP_NOT_BOARDING"
  | "ROUTE_NOT_FOUND"
  | "SALE_FORBIDDEN"
  | "SALE_INVALID"
  | "SALE_OPENING_FROZEN"
  | "SALE_WINDOW_INVALID"
  | "SEATS_NOT_ALLOCATABLE"
  | "SHOW_ALREADY_STARTED"
  | "SHOW_DRAFT"
  | "SHOW_FIELD_FORBIDDEN"
  | "SHOW_INVALID"
  | "TIMETABLE_NOT_FOUND"
  | "WAITING_ROOMS_NOT_SERVED"
  | "WEBHOOK_ENDPOINT_LIMIT"
  | "WEBHOOK_ENDPOINT_NOT_FOUND"
  | "WEBHOOK_FORBIDDEN"
  | "WEBHOOK_INVALID"
  | "WEBHOOK_MANAGE_DENIED"
  | "WEBHOOK_UNROUTABLE";

export const reasonsEn: Record<Exclude<ErrorReason, StaffReason>, string> = {
  INVALID_ARGUMENT: "Some of what was entered is not right. Please check it and try again.",
  BOOKING_INVALID: "Some of these seats do not exist or are too many at once. Please choose again.",
  PAYMENT_INVALID: "That amount is more than was paid.",
  PAGE_TOKEN_INVALID: "The list has changed. Please start again from the first page.",
  IDEMPOTENCY_KEY_MISSING: "The request could not be sent safely. Please reload the page and try again.",
  IDEMPOTENCY_KEY_INVALID: "The request could not be sent safely. Please reload the page and try again.",
  IDEMPOTENCY_KEY_REUSED: "The request could not be sent safely. Please reload the page and try again.",
  TICKET_ID_INVALID: "Check the ticket number and try again, or scan the QR code.",
  QUEUE_TOKEN_REQUIRED: "Please wait in line for your turn.",
  QUEUE_TOKEN_INVALID: "Your place in line is not valid. Please join the line again.",
  QUEUE_TOKEN_EXPIRED: "Your turn expired. Please join the line again.",
  QUEUE_TOKEN_NOT_ADMITTED: "It is not your turn yet. Please keep waiting.",
  QUEUE_TOKEN_WRONG_SALE: "Your place in line is for another show. Please join this show's line.",
  QUEUE_TOKEN_WRONG_CALLER: "This place in line belongs to another account. Please join the line yourself.",
  NOT_IN_LINE: "Your turn expired. Please join the line again.",
  UNAUTHENTICATED: "Please sign in.",
  TOKEN_INVALID: "Your session has ended. Please sign in again.",
  TOKEN_EXPIRED: "Your session has ended. Please sign in again.",
  SEATS_UNAVAILABLE: "Sorry, these seats were just taken. Please choose again.",
  IDEMPOTENCY_KEY_IN_PROGRESS: "This is still being done. Please wait a moment.",
  RATE_LIMITED: "Too many tries. Please wait a moment and try again.",
  SHOW_NOT_FOUND: "This show is no longer listed.",
  BOOKING_NOT_FOUND: "We could not find this booking. It may have expired.",
  PAYMENT_NOT_FOUND: "We could not find this payment. Please refresh the order.",
  TICKET_NOT_FOUND: "Ticket not recognised. Check the ticket by hand.",
  WAITING_ROOM_NOT_FOUND: "This show has no waiting room. You can book directly.",
  ID_NOT_FOUND: "We could not find that. Please go back and try again.",
  SHOW_MOVING: "Busy for a moment. Please try again.",
  SHOW_CANCELLED: "This show was cancelled. Every buyer is refunded in full.",
  PAID_AT_COUNTER: "This ticket was paid in cash at a counter. Return it there for your cash.",
  WALK_IN_RESERVE: "Online sales have ended for this trip; the counter may still have seats.",
  BOOKING_NOT_ALLOWED: "This cannot be done now: sales may not be open, or your hold has ended. Please refresh and try again.",
  ORDER_CHECKED_IN: "A ticket of this order was used at the gate; it can no longer be cancelled.",
  SEATS_NOT_IN_CHANNEL: "Some of these seats are not sold here. Please choose among the seats shown free.",
  JOURNEY_NOT_SOLD: "This coach does not sell these seats between these stops. Please choose other stops or seats.",
  ORDER_NOT_CONFIRMABLE: "Your seats were released before the payment arrived; your money is being returned.",
  PAYMENT_NOT_ALLOWED: "A payment for this order is already in progress, or nothing is left to pay.",
  TICKET_NOT_ADMISSIBLE: "This ticket is not valid for this show.",
  TICKET_BOARDS_ELSEWHERE: "This ticket boards at another stop of the trip.",
  SERVICE_NOT_FOUND: "This server does not serve that.",
  PERMISSION_DENIED: "Your account may not do this.",
  PAYMENT_FORBIDDEN: "Another admin must approve this refund.",
  GATE_FORBIDDEN: "You do not check tickets in for this show.",
  WOMEN_SEAT_UNDECLARED: "This seat is for women. Please confirm that its passenger is a woman, or choose another seat.",
  SEATS_BLOCKED: "This seat is not for sale. Please choose another.",
  PAYMENT_ATTEMPTS_EXHAUSTED: "Too many payment attempts for this order. Please start a new order.",
  AUTH_UNAVAILABLE: "Busy; please try again.",
  QUEUE_UNAVAILABLE: "Busy; please try again.",
  SEARCH_UNAVAILABLE: "Search is unavailable for a moment. Please try again soon.",
  DATABASE_UNAVAILABLE: "We are busy for a moment. Please try again; nothing is charged twice.",
  NOT_SERVED: "This server does not offer this.",
  CANCELED: "Stopped.",
  DEADLINE_EXCEEDED: "This took too long. Please try again.",
  INTERNAL: "Something went wrong on our side. Please try again.",
  SEATS_NOT_TOGETHER: "There are not that many seats side by side any more. Take them apart, fewer, or choose on the map.",
};

export const reasonsBn: Record<Exclude<ErrorReason, StaffReason>, string> = {
  INVALID_ARGUMENT: "দেওয়া তথ্যের কিছু ঠিক নেই। দেখে আবার চেষ্টা করুন।",
  BOOKING_INVALID: "এর কিছু আসন নেই, বা একবারে অনেক বেশি। আবার বাছুন।",
  PAYMENT_INVALID: "এই পরিমাণ পরিশোধ করা টাকার চেয়ে বেশি।",
  PAGE_TOKEN_INVALID: "তালিকা বদলে গেছে। প্রথম পাতা থেকে আবার শুরু করুন।",
  IDEMPOTENCY_KEY_MISSING: "অনুরোধটি নিরাপদে পাঠানো যায়নি। পাতাটি আবার লোড করে চেষ্টা করুন।",
  IDEMPOTENCY_KEY_INVALID: "অনুরোধটি নিরাপদে পাঠানো যায়নি। পাতাটি আবার লোড করে চেষ্টা করুন।",
  IDEMPOTENCY_KEY_REUSED: "অনুরোধটি নিরাপদে পাঠানো যায়নি। পাতাটি আবার লোড করে চেষ্টা করুন।",
  TICKET_ID_INVALID: "টিকিট নম্বর দেখে আবার চেষ্টা করুন, বা কিউআর কোড স্ক্যান করুন।",
  QUEUE_TOKEN_REQUIRED: "আপনার পালার জন্য লাইনে অপেক্ষা করুন।",
  QUEUE_TOKEN_INVALID: "লাইনে আপনার স্থান বৈধ নয়। আবার লাইনে যোগ দিন।",
  QUEUE_TOKEN_EXPIRED: "আপনার পালার সময় শেষ। আবার লাইনে যোগ দিন।",
  QUEUE_TOKEN_NOT_ADMITTED: "এখনো আপনার পালা আসেনি। অপেক্ষা করুন।",
  QUEUE_TOKEN_WRONG_SALE: "লাইনে আপনার স্থান অন্য অনুষ্ঠানের। এই অনুষ্ঠানের লাইনে যোগ দিন।",
  QUEUE_TOKEN_WRONG_CALLER: "লাইনের এই স্থান অন্য অ্যাকাউন্টের। নিজে লাইনে যোগ দিন।",
  NOT_IN_LINE: "আপনার পালার সময় শেষ। আবার লাইনে যোগ দিন।",
  UNAUTHENTICATED: "সাইন ইন করুন।",
  TOKEN_INVALID: "আপনার সেশন শেষ হয়েছে। আবার সাইন ইন করুন।",
  TOKEN_EXPIRED: "আপনার সেশনের মেয়াদ শেষ হয়েছে। আবার সাইন ইন করুন।",
  SEATS_UNAVAILABLE: "দুঃখিত, এই আসনগুলো এইমাত্র অন্য কেউ নিয়েছেন। আবার বাছুন।",
  IDEMPOTENCY_KEY_IN_PROGRESS: "কাজটি এখনো চলছে। একটু অপেক্ষা করুন।",
  RATE_LIMITED: "অনেকবার চেষ্টা হয়েছে। একটু অপেক্ষা করে আবার চেষ্টা করুন।",
  SHOW_NOT_FOUND: "এই অনুষ্ঠান বা যাত্রা আর তালিকায় নেই।",
  BOOKING_NOT_FOUND: "এই বুকিং খুঁজে পাওয়া যায়নি। এর মেয়াদ শেষ হয়ে থাকতে পারে।",
  PAYMENT_NOT_FOUND: "এই পরিশোধ খুঁজে পাওয়া যায়নি। অর্ডারটি আবার লোড করুন।",
  TICKET_NOT_FOUND: "টিকিট চেনা যায়নি। হাতে টিকিটটি যাচাই করুন।",
  WAITING_ROOM_NOT_FOUND: "এই অনুষ্ঠানের অপেক্ষার ঘর নেই। সরাসরি বুক করতে পারেন।",
  ID_NOT_FOUND: "এটি খুঁজে পাওয়া যায়নি। ফিরে গিয়ে আবার চেষ্টা করুন।",
  SHOW_MOVING: "কিছুক্ষণের জন্য ব্যস্ত। আবার চেষ্টা করুন।",
  SHOW_CANCELLED: "অনুষ্ঠানটি বাতিল হয়েছে। প্রত্যেক ক্রেতা পুরো টাকা ফেরত পাবেন।",
  PAID_AT_COUNTER: "এই টিকিট কাউন্টারে নগদে কেনা। নগদ ফেরত পেতে সেই কাউন্টারে যান।",
  WALK_IN_RESERVE: "এই যাত্রার অনলাইন বিক্রি শেষ; কাউন্টারে এখনও আসন থাকতে পারে।",
  BOOKING_NOT_ALLOWED: "এখন এটি করা যাচ্ছে না: বিক্রি হয়তো শুরু হয়নি, বা আসন আটকে রাখার সময় শেষ। পাতাটি আবার লোড করে চেষ্টা করুন।",
  ORDER_CHECKED_IN: "এই অর্ডারের একটি টিকিট গেটে ব্যবহার হয়েছে; এটি আর বাতিল করা যাবে না।",
  SEATS_NOT_IN_CHANNEL: "এর কিছু আসন এখানে বিক্রি হয় না। খালি দেখানো আসনগুলো থেকে বাছুন।",
  JOURNEY_NOT_SOLD: "এই কোচে এই দুই স্টপের মধ্যে এই আসনগুলো বিক্রি হয় না। অন্য স্টপ বা আসন বাছুন।",
  ORDER_NOT_CONFIRMABLE: "পরিশোধ পৌঁছানোর আগেই আপনার আসন ছেড়ে দেওয়া হয়েছে; আপনার টাকা ফেরত দেওয়া হচ্ছে।",
  PAYMENT_NOT_ALLOWED: "এই অর্ডারের একটি পরিশোধ চলছে, বা পরিশোধের কিছু বাকি নেই।",
  TICKET_NOT_ADMISSIBLE: "এই টিকিট এই অনুষ্ঠান বা যাত্রার জন্য বৈধ নয়।",
  TICKET_BOARDS_ELSEWHERE: "এই টিকিটে যাত্রার অন্য স্টপ থেকে উঠতে হবে।",
  SERVICE_NOT_FOUND: "এই সার্ভার এটি দেয় না।",
  PERMISSION_DENIED: "আপনার অ্যাকাউন্ট এটি করতে পারে না।",
  PAYMENT_FORBIDDEN: "এই টাকা ফেরত অন্য একজন অ্যাডমিনকে অনুমোদন করতে হবে।",
  GATE_FORBIDDEN: "আপনি এই অনুষ্ঠানের টিকিট যাচাই করেন না।",
  WOMEN_SEAT_UNDECLARED: "এই আসনটি মহিলাদের জন্য। যাত্রী একজন মহিলা তা নিশ্চিত করুন, নয়তো অন্য আসন বাছুন।",
  SEATS_BLOCKED: "এই আসনটি বিক্রির জন্য নয়। অন্য আসন বাছুন।",
  PAYMENT_ATTEMPTS_EXHAUSTED: "এই অর্ডারে অনেকবার পরিশোধের চেষ্টা হয়েছে। নতুন অর্ডার করুন।",
  AUTH_UNAVAILABLE: "ব্যস্ত; আবার চেষ্টা করুন।",
  QUEUE_UNAVAILABLE: "ব্যস্ত; আবার চেষ্টা করুন।",
  SEARCH_UNAVAILABLE: "খোঁজ কিছুক্ষণের জন্য বন্ধ। একটু পরে আবার চেষ্টা করুন।",
  DATABASE_UNAVAILABLE: "এই মুহূর্তে ব্যস্ত। আবার চেষ্টা করুন; টাকা দুবার কাটা হবে না।",
  NOT_SERVED: "এই সার্ভার এটি দেয় না।",
  CANCELED: "থামানো হয়েছে।",
  DEADLINE_EXCEEDED: "অনেক সময় লেগেছে। আবার চেষ্টা করুন।",
  INTERNAL: "আমাদের দিকে কিছু একটা ভুল হয়েছে। আবার চেষ্টা করুন।",
  SEATS_NOT_TOGETHER: "পাশাপাশি এতগুলো আসন আর খালি নেই। আলাদা আসন, কম আসন নিন, বা নকশা থেকে বাছুন।",
};
