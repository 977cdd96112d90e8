// The browser entry point of @seatghor/client (package.json `exports`,
// conditions "browser" and "default"): the client over connect-web's
// fetch transport. It runs wherever fetch does (browsers, Deno, Bun,
// workers, Node ≥ 20) and pulls in no Node module.
import type { DescService } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
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
  return clientOverTransport(createSeatghorTransport(options));
}

/**
 * Creates the Connect clients of a buyer's services (BuyerClient) for one
 * server, over fetch: a web page's smaller bundle.
 */
export function createBuyerClient(options: BrowserClientOptions): BuyerClient {
  return buyerClientOverTransport(createSeatghorTransport(options));
}

/**
 * The Connect client of one service, over fetch with the clients'
 * interceptors: for a page that calls a service BuyerClient does not carry
 * (`createServiceClient(ManifestService, options)`), so its bundle takes
 * that service's descriptors and no other's.
 */
export function createServiceClient<T extends DescService>(service: T, options: BrowserClientOptions): Client<T> {
  return createClient(service, createSeatghorTransport(options));
}

/** The fetch transport of the browser clients. */
function createSeatghorTransport(options: BrowserClientOptions) {
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
