// The browser entry point of @seatghor/client (package.json `exports`,
// conditions "browser" and "default"): the client over connect-web's
// fetch transport. It runs wherever fetch does (browsers, Deno, Bun,
// workers, Node ≥ 20) and pulls in no Node module.
import { createConnectTransport } from "@connectrpc/connect-web";

import { fetchWithUnavailable } from "./calls.js";
import { buyerClientOverTransport, clientInterceptors, clientOverTransport } from "./client.js";
import type { BuyerClient, SeatghorClient, SeatghorClientOptions } from "./client.js";

export * from "./common.js";

/** Which transport this entry point uses. */
export const transportKind = "connect-web" as const;

/** Options of the browser client: those of both entries, and fetch. */
export interface BrowserClientOptions extends SeatghorClientOptions {
  /**
   * The fetch to use (default globalThis.fetch); wrap it to set fetch
   * options such as credentials.
   */
  fetch?: typeof globalThis.fetch;
}

/** Creates the Connect clients for one server, over fetch. */
export function createSeatghorClient(options: BrowserClientOptions): SeatghorClient {
  return clientOverTransport(browserTransport(options));
}

/**
 * Creates the Connect clients of a buyer's services (BuyerClient) for one
 * server, over fetch: a web page's smaller bundle.
 */
export function createBuyerClient(options: BrowserClientOptions): BuyerClient {
  return buyerClientOverTransport(browserTransport(options));
}

/** The fetch transport of the browser clients. */
function browserTransport(options: BrowserClientOptions) {
  return createConnectTransport({
    baseUrl: options.baseUrl,
    useBinaryFormat: options.binary ?? false,
    // Reads (NO_SIDE_EFFECTS RPCs) go as GET: the seat map's polls take
    // the server's fast path, and the browser's cache revalidates them
    // with If-None-Match (304 while nothing moved).
    useHttpGet: true,
    interceptors: clientInterceptors(options),
    fetch: fetchWithUnavailable(options.fetch),
  });
}
