// The site's service worker (decision 0397), built by build.mjs into
// dist/sw.js with Workbox's modules and served from / by server/site:
//
// - The shell (index.html, app.js, app.css and the chunks) is precached at
//   install, revalidated with the ETags the server already sends rather
//   than downloaded again, so the site opens with no network; every page
//   of the app (the server's site routes) is answered with the shell.
// - "My tickets" (ListMyTickets, a GET) is network first and, when the
//   network fails or is too slow, answered from the last copy of the same
//   user on this phone, marked with when it was made (saved.ts). The copy
//   is keyed by a hash of the user id read from the request's token and
//   stored without the token (decision 0398). The PDFs are kept by the
//   page itself in the same cache (pages/tickets.tsx).
// - The Bengali font is kept once fetched; the sign-in configuration is
//   network first.
// Everything else (the API's other calls, seat maps, holds, payments, the
// sign-in) goes to the network as without a worker: a page that needs the
// network says so when it fails (decision 0399).
import { clientsClaim } from "workbox-core";
import type { WorkboxPlugin } from "workbox-core";
import { addPlugins, cleanupOutdatedCaches, createHandlerBoundToURL, precacheAndRoute } from "workbox-precaching";
import type { PrecacheEntry } from "workbox-precaching";
import { NavigationRoute, registerRoute } from "workbox-routing";
import { CacheFirst, NetworkFirst } from "workbox-strategies";
import { CacheableResponsePlugin } from "workbox-cacheable-response";

import { MY_TICKETS_PATH, SAVED_AT_HEADER, SAVED_CACHE, savedPrefix, userKey } from "./saved.js";

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: PrecacheEntry[] };

// A new version takes over at once: the shell and the API of one server
// version go together, and a page open meanwhile keeps what it loaded.
void self.skipWaiting();
clientsClaim();

// Workbox fetches a precached file with cache "reload" (a full download,
// though the page has just loaded it); "no-cache" revalidates it with the
// server's ETag instead, a 304 when the page's copy is the current one.
addPlugins([{ requestWillFetch: async ({ request }) => new Request(request, { cache: "no-cache" }) }]);
precacheAndRoute(self.__WB_MANIFEST);
cleanupOutdatedCaches();

// The app's pages (server/site's Routes; Workbox matches the path and the
// query string): the shell, which routes in the page. Anything else
// (/auth/…, the API, /openapi.yaml) is the server's.
registerRoute(
  new NavigationRoute(createHandlerBoundToURL("/"), {
    allowlist: [/^\/(search|tickets|signin|gate|find)?(\?|$)/, /^\/(show|wait|order|t)\//],
  }),
);

/** The user id (sub) of a bearer JWT, read, not verified: it only names whose copy. */
function subjectOf(authorization: string | null): string | undefined {
  const token = authorization?.match(/^Bearer (\S+)$/)?.[1];
  const part = token?.split(".")[1];
  if (!part) return undefined;
  try {
    const claims = JSON.parse(atob(part.replace(/-/g, "+").replace(/_/g, "/"))) as { sub?: unknown };
    return typeof claims.sub === "string" && claims.sub ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Keys the copy by the caller's user (the request's address, the message
 * in its query, under the user's prefix) and stores no header of the
 * request; a caller without a readable user gets no copy and reads none.
 */
const perUser: WorkboxPlugin = {
  cacheKeyWillBeUsed: async ({ request }) => {
    const sub = subjectOf(request.headers.get("Authorization"));
    const url = new URL(request.url);
    if (!sub) return `${self.location.origin}/saved/nobody${url.pathname}`;
    return `${savedPrefix(self.location.origin, await userKey(sub))}${url.pathname.slice(1)}${url.search}`;
  },
  cacheWillUpdate: async ({ request, response }) =>
    subjectOf(request.headers.get("Authorization")) && response.status === 200 ? response : null,
  // The answer from the copy says when it was made.
  cachedResponseWillBeUsed: async ({ cachedResponse }) => {
    if (!cachedResponse) return cachedResponse;
    const headers = new Headers(cachedResponse.headers);
    headers.set(SAVED_AT_HEADER, cachedResponse.headers.get("Date") ?? "");
    return new Response(await cachedResponse.blob(), { status: cachedResponse.status, headers });
  },
};

registerRoute(
  ({ url, request, sameOrigin }) => sameOrigin && request.method === "GET" && url.pathname === MY_TICKETS_PATH,
  new NetworkFirst({ cacheName: SAVED_CACHE, networkTimeoutSeconds: 8, plugins: [perUser], matchOptions: { ignoreVary: true } }),
);

registerRoute(
  ({ url, sameOrigin }) => sameOrigin && url.pathname.startsWith("/assets/") && url.pathname.endsWith(".woff2"),
  new CacheFirst({ cacheName: "seatghor-fonts", plugins: [new CacheableResponsePlugin({ statuses: [200] })] }),
);

registerRoute(
  ({ url, sameOrigin }) => sameOrigin && url.pathname === "/auth/config.json",
  new NetworkFirst({ cacheName: "seatghor-config", networkTimeoutSeconds: 4 }),
);
