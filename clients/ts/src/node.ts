// The Node entry point of @seatghor/client (package.json `exports`, condition
// "node"): the client over connect-node's HTTP/1.1 transport.
import { createConnectTransport } from "@connectrpc/connect-node";

import { clientInterceptors, clientOverTransport } from "./client.js";
import type { SeatghorClient, SeatghorClientOptions } from "./client.js";

export * from "./common.js";

/** Which transport this entry point uses. */
export const transportKind = "connect-node" as const;

/** Creates the Connect clients for one server, over Node's http module. */
export function createSeatghorClient(options: SeatghorClientOptions): SeatghorClient {
  return clientOverTransport(
    createConnectTransport({
      baseUrl: options.baseUrl,
      httpVersion: "1.1",
      useBinaryFormat: options.binary ?? false,
      // Reads (NO_SIDE_EFFECTS RPCs) go as GET, as from the browser.
      useHttpGet: true,
      interceptors: clientInterceptors(options),
    }),
  );
}
