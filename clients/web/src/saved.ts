// What the page and the service worker (sw.ts) agree on about the copies
// kept on the phone for offline use (decision 0398): one cache, entries
// under a key per user made from the user id (a hash), never from a token,
// and never with the Authorization header stored (the token lives in the
// tab's sessionStorage only, decision 0162).

/** The cache of "my tickets" answers and order PDFs, per user. */
export const SAVED_CACHE = "seatghor-saved-v1";

/** The read the service worker keeps a copy of, per user. */
export const MY_TICKETS_PATH = "/seatghor.tickets.v1.TicketService/ListMyTickets";

/**
 * The header the service worker adds to an answer it gives from its copy:
 * when the copy was made (the answer's Date), so the page can say so.
 */
export const SAVED_AT_HEADER = "x-seatghor-saved-at";

/** The key of a user's copies: a hash of the user id, 128 bits in hex. */
export async function userKey(userId: string): Promise<string> {
  const sum = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`seatghor-saved:${userId}`));
  return [...new Uint8Array(sum).slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Where a user's copies live in the cache: same-origin addresses that the
 * server never serves (they are only cache keys).
 */
export function savedPrefix(origin: string, key: string): string {
  return `${origin}/saved/${key}/`;
}

/** The cache key of an order's PDF in one language. */
export function pdfKey(origin: string, key: string, orderId: string, lang: string): string {
  return `${savedPrefix(origin, key)}pdf/${encodeURIComponent(orderId)}-${lang}.pdf`;
}
