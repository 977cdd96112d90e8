// The TypeScript SDK in a phone app's native shell (docs/mobile.md): a
// Capacitor or Cordova app, or any WebView, runs this code as it is; it
// needs only fetch. It talks Connect in the binary (Protobuf) encoding,
// whose answers are smaller than JSON's on a phone's connection
// (docs/performance.md, "A phone's bytes"), reads as GETs (the seat map's
// refresh is answered from the server's cache and revalidated with its
// ETag), and keeps the layout of a seat map so that each refresh carries
// only the availability, 2 bits a seat.
//
// test/example-suite.ts runs it against `seatghor dev`.
import { SeatState, createSeatghorClient, seatStates } from "@seatghor/client/browser";
import type { SeatghorClient, seatmap } from "@seatghor/client/browser";

/** What the shell gives the client. */
export interface PhoneOptions {
  /** The Seatghor API, e.g. "https://api.seatghor.example". */
  baseUrl: string;
  /**
   * The signed-in user's token, asked before every call (keep it in the
   * platform's secure storage: Keychain, Android Keystore).
   */
  token: () => string | undefined;
  /** The fetch to use; default the platform's. */
  fetch?: typeof globalThis.fetch;
}

/** The SDK as a phone uses it: binary encoding, reads as GETs, retries. */
export function phoneClient(options: PhoneOptions): SeatghorClient {
  return createSeatghorClient({ baseUrl: options.baseUrl, token: options.token, binary: true, fetch: options.fetch });
}

/**
 * A show's seat map kept current: the whole map (with its layout) on the
 * first refresh and whenever the layout changed, otherwise the
 * availability alone (the server answers it when the layout etag it is
 * sent is current).
 */
export class SeatMapView {
  private layoutEtag = "";
  private sections: seatmap.Section[] = [];
  /** Each seat's state, in layout order. */
  states = new Map<string, SeatState>();

  constructor(
    private readonly sg: SeatghorClient,
    readonly showId: bigint,
  ) {}

  /** Reads the map again; says whether the answer carried the layout. */
  async refresh(): Promise<boolean> {
    const m = await this.sg.seatMap.getSeatMap({ showId: this.showId, layoutEtag: this.layoutEtag });
    if (!m.availabilityOnly) {
      this.layoutEtag = m.layoutEtag;
      this.sections = m.sections;
    }
    this.states = seatStates({ ...m, sections: this.sections });
    return !m.availabilityOnly;
  }

  /** The seats free now. */
  free(): string[] {
    return [...this.states].filter(([, st]) => st === SeatState.AVAILABLE_UNSPECIFIED).map(([seat]) => seat);
  }
}

/** What a purchase made. */
export interface Purchase {
  holdId: string;
  orderId: string;
  paymentId: string;
  /** The gateway's page to send the buyer to (empty with a sandbox token). */
  redirectUrl: string;
}

/**
 * Buys seats: a hold, its order, and the payment started (a retried call
 * never holds or charges twice: the SDK sends one Idempotency-Key per
 * call). With a real gateway, open redirectUrl in the system browser and
 * follow the order (GetOrder) when the app comes back.
 */
export async function buy(sg: SeatghorClient, showId: bigint, seats: string[], sandboxToken?: string): Promise<Purchase> {
  const { hold } = await sg.holds.createHold({ showId, seats });
  const { order } = await sg.orders.createOrder({ holdId: hold!.holdId });
  const { payment } = await sg.payments.startPayment({
    orderId: order!.orderId,
    ...(sandboxToken ? { sandbox: { token: sandboxToken } } : {}),
  });
  return { holdId: hold!.holdId, orderId: order!.orderId, paymentId: payment!.paymentId, redirectUrl: payment!.redirectUrl };
}
