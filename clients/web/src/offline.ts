// The page's side of the copies kept for offline (decision 0398): the
// order PDFs, fetched once while online and kept in the same per-user
// cache as the service worker's copies of "my tickets" (saved.ts), read
// back as a local link when the network is gone, and all of a user's
// copies forgotten when they sign out.
import { SAVED_CACHE, pdfKey, savedPrefix, userKey } from "./saved.js";

const hasCaches = () => typeof caches !== "undefined";

/**
 * Keeps a copy of an order's PDF (url: its presigned address, which is
 * never a key) unless one is kept already. The object store answers
 * cross-origin reads (CORS); a failure only means no copy.
 */
export async function savePdf(userId: string, orderId: string, lang: string, url: string): Promise<void> {
  if (!hasCaches()) return;
  try {
    const cache = await caches.open(SAVED_CACHE);
    const key = pdfKey(location.origin, await userKey(userId), orderId, lang);
    if (await cache.match(key)) return;
    const r = await fetch(url);
    if (r.ok) await cache.put(key, new Response(await r.blob(), { headers: { "Content-Type": "application/pdf" } }));
  } catch {
    // no copy this time; the next visit tries again
  }
}

/** A local address (blob:) of the kept copy of an order's PDF, if any. */
export async function savedPdf(userId: string, orderId: string, lang: string): Promise<string | undefined> {
  if (!hasCaches()) return undefined;
  try {
    const r = await caches.match(pdfKey(location.origin, await userKey(userId), orderId, lang), { cacheName: SAVED_CACHE });
    return r ? URL.createObjectURL(await r.blob()) : undefined;
  } catch {
    return undefined;
  }
}

/** Forgets every copy kept for a user (on sign-out). */
export async function forgetSaved(userId: string): Promise<void> {
  if (!hasCaches()) return;
  try {
    const cache = await caches.open(SAVED_CACHE);
    const prefix = savedPrefix(location.origin, await userKey(userId));
    for (const req of await cache.keys()) if (req.url.startsWith(prefix)) await cache.delete(req);
  } catch {
    // nothing kept, or storage refused
  }
}
