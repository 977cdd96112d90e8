// The gate device's offline side (docs/gate-offline.md): the show's
// admission list and the codes' public keys kept in IndexedDB, the
// decision on a scan with no network, the scans recorded locally, and their
// sync (TicketService.SyncGateScans) when the network returns and every few
// seconds while it is there. Nothing here is a secret: the keys are public,
// and the list names tickets by id, as the gate's own answers do.
import { openDB } from "idb";
import type { DBSchema, IDBPDatabase } from "idb";
import type { BuyerClient, GetGateStatusResponse, SettledScan } from "@seatghor/client";

import { judge } from "./rules.js";
import type { Entry, OfflineVerdict } from "./rules.js";
import { prepare, readCode, showOfTicket } from "./verify.js";
import type { PublicKey } from "./verify.js";

export type { Entry, OfflineVerdict } from "./rules.js";

/** A scan this device admitted with no network. */
export interface LocalScan {
  scanId: string;
  showId: string;
  ticketId: string;
  place: string;
  /** The value scanned: a code, or a ticket id typed in. */
  code?: string;
  typedId?: string;
  /** When, by this device's clock (ms). */
  scannedAt: number;
  gate: string;
  /** The stop of the trip the gate stood at; "" or absent: none. */
  stopId?: string;
  /** 0 until the server settled it, then 1 (an index key: no booleans). */
  synced: 0 | 1;
  outcome?: string;
}

interface ListInfo {
  showId: string;
  /** When it was downloaded, by this device's clock (ms). */
  fetchedAt: number;
  count: number;
}

interface GateDB extends DBSchema {
  meta: { key: string; value: unknown };
  lists: { key: string; value: ListInfo };
  tickets: { key: [string, string]; value: Entry };
  scans: { key: string; value: LocalScan; indexes: { byShow: [string, number]; byTicket: [string, string] } };
}

/** What the gate page shows of the offline side. */
export interface Snapshot {
  online: boolean;
  pending: number;
  list?: ListInfo;
  lastSyncAt?: number;
  status?: GetGateStatusResponse;
  needsSignIn: boolean;
}

const DEVICE_KEY = "deviceId";
const OFFSET_KEY = "clockOffsetMs";
const KEYS_KEY = "ticketKeys";
/** Scans a batch carries at most (the server takes 500). */
const BATCH = 500;
/** How often the background sync runs while online. */
export const SYNC_EVERY_MS = 5_000;
/** How old the list may get before it is downloaded again while online. */
const LIST_FRESH_MS = 60_000;

const ms = (t: { seconds: bigint; nanos: number } | undefined): number | undefined =>
  t ? Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6) : undefined;
const ts = (m: number) => ({ seconds: BigInt(Math.floor(m / 1000)), nanos: (((m % 1000) + 1000) % 1000) * 1e6 });

/**
 * How the page reads the API's errors. The page passes them in, so that this
 * chunk shares no code with the page's and the page's first load stays one
 * file.
 */
export interface ErrorKinds {
  /** The network's failure, not the server's answer. */
  networkFailed(err: unknown): boolean;
  /** The sign-in is gone (the token expired). */
  signedOut(err: unknown): boolean;
}

export class GateEngine {
  private running = false;
  private listeners = new Set<() => void>();
  private snapshot: Snapshot = { online: navigator.onLine, pending: 0, needsSignIn: false };

  private constructor(
    private readonly db: IDBPDatabase<GateDB>,
    private readonly api: BuyerClient,
    private readonly errors: ErrorKinds,
    readonly deviceId: string,
  ) {}

  static async open(api: BuyerClient, errors: ErrorKinds): Promise<GateEngine> {
    const db = await openDB<GateDB>("seatghor-gate", 1, {
      upgrade(d) {
        d.createObjectStore("meta");
        d.createObjectStore("lists", { keyPath: "showId" });
        d.createObjectStore("tickets", { keyPath: ["showId", "ticketId"] });
        const scans = d.createObjectStore("scans", { keyPath: "scanId" });
        scans.createIndex("byShow", ["showId", "synced"]);
        scans.createIndex("byTicket", ["showId", "ticketId"]);
      },
    });
    let id = (await db.get("meta", DEVICE_KEY)) as string | undefined;
    if (!id) {
      id = "dev-" + crypto.randomUUID().replace(/-/g, "").slice(0, 20);
      await db.put("meta", id, DEVICE_KEY);
    }
    return new GateEngine(db, api, errors, id);
  }

  /** The latest snapshot; subscribe to hear of changes. */
  state(): Snapshot {
    return this.snapshot;
  }

  subscribe(f: () => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  private changed(patch: Partial<Snapshot>) {
    this.snapshot = { ...this.snapshot, ...patch };
    this.listeners.forEach((f) => f());
  }

  private async offset(): Promise<number | undefined> {
    return (await this.db.get("meta", OFFSET_KEY)) as number | undefined;
  }

  /** Keeps the server's clock minus this one, from a round trip's midpoint. */
  private async measured(sentAt: number, serverTime: number | undefined) {
    if (serverTime === undefined) return;
    await this.db.put("meta", Math.round(serverTime - (sentAt + Date.now()) / 2), OFFSET_KEY);
  }

  private async keys(): Promise<PublicKey[]> {
    return ((await this.db.get("meta", KEYS_KEY)) as PublicKey[] | undefined) ?? [];
  }

  /** Downloads the codes' public keys and the show's admission list. */
  async download(showId: string): Promise<void> {
    const k = await this.api.tickets.getTicketKeys({});
    const keys = k.keys.filter((x) => x.algorithm === "Ed25519").map((x) => ({ kid: x.keyId, raw: x.publicKey }));
    await this.db.put("meta", keys, KEYS_KEY);
    await prepare(keys);
    const entries: Entry[] = [];
    let pageToken = "";
    for (;;) {
      const sentAt = Date.now();
      const r = await this.api.tickets.getAdmissionList({ showId: BigInt(showId), pageToken, pageSize: 2000 });
      if (!pageToken) await this.measured(sentAt, ms(r.serverTime));
      for (const a of r.admissions) {
        const status = (["", "valid", "checked_in", "cancelled", "refunded"] as const)[a.status] || "valid";
        entries.push({ showId, ticketId: a.ticketId, seat: a.seat, gaArea: a.gaArea, status,
          checkedInAt: ms(a.checkedInAt), checkedInGate: a.checkedInGate || undefined,
          boardingStopId: a.boardingStopId || undefined });
      }
      pageToken = r.nextPageToken;
      if (!pageToken) break;
    }
    const tx = this.db.transaction(["tickets", "lists"], "readwrite");
    const tickets = tx.objectStore("tickets");
    await tickets.delete(IDBKeyRange.bound([showId, ""], [showId, "\uffff"]));
    for (const e of entries) void tickets.put(e);
    const info = { showId, fetchedAt: Date.now(), count: entries.length };
    void tx.objectStore("lists").put(info);
    await tx.done;
    this.changed({ list: info });
  }

  /** Remembers a check-in answered online, so a scan offline later knows it. */
  async rememberOnline(showId: string, ticketId: string, seat: string, gaArea: string, at: number | undefined, gate: string) {
    const cur = await this.db.get("tickets", [showId, ticketId]);
    await this.db.put("tickets", { ...(cur ?? { showId, ticketId, seat, gaArea }), status: "checked_in", checkedInAt: at, checkedInGate: gate });
  }

  /**
   * Decides a scan with no network (docs/gate-offline.md): a code's
   * signature first, then the rules (./rules.ts) on the list and this
   * device's own scans; an admitted scan is recorded to sync. stopId is the
   * stop of the trip the gate stands at ("" for none): a ticket boarding at
   * another is refused (decision 0408).
   */
  async decide(showId: string, raw: string, gate: string, stopId = ""): Promise<OfflineVerdict> {
    const value = raw.trim();
    let ticketId: string;
    let place = "";
    let signed = false;
    if (value.toLowerCase().startsWith("tkt_")) {
      ticketId = value.toLowerCase();
    } else {
      const r = await readCode(value, await this.keys());
      if (!r.ok) return { kind: "bad", why: r.why };
      ({ ticketId, place, signed } = r);
    }
    const ticketShow = showOfTicket(ticketId);
    const entry = ticketShow === showId ? await this.db.get("tickets", [showId, ticketId]) : undefined;
    const mine = ticketShow === showId ? await this.db.getAllFromIndex("scans", "byTicket", [showId, ticketId]) : [];
    const v = judge({ showId, ticketShow, ticketId, place, signed, stopId, entry, mine });
    if (v.kind !== "admit") return v;
    const scan: LocalScan = { scanId: crypto.randomUUID(), showId, ticketId, place: v.place, scannedAt: Date.now(), gate, synced: 0 };
    if (stopId) scan.stopId = stopId;
    if (signed || value.toLowerCase() !== ticketId) scan.code = value;
    else scan.typedId = ticketId;
    await this.db.put("scans", scan);
    await this.countPending(showId);
    return { kind: "ok", ticketId, place: v.place, inList: !!entry };
  }

  /**
   * The stop the list says a scanned ticket boards at, for the gate to
   * name it when the server refuses the ticket online
   * (TICKET_BOARDS_ELSEWHERE); undefined when the list does not say.
   */
  async boardingStopOf(showId: string, raw: string): Promise<string | undefined> {
    const value = raw.trim();
    let ticketId = value.toLowerCase();
    if (!ticketId.startsWith("tkt_")) {
      const r = await readCode(value, await this.keys());
      if (!r.ok) return undefined;
      ticketId = r.ticketId;
    }
    return (await this.db.get("tickets", [showId, ticketId]))?.boardingStopId;
  }

  private async countPending(showId: string) {
    this.changed({ pending: await this.db.countFromIndex("scans", "byShow", [showId, 0]) });
  }

  /**
   * Sends this device's unsynced scans of the show, a batch per gate and
   * stop (each scan with the stop it was made at); with none waiting, a
   * heartbeat from gate at stopId.
   */
  async sync(showId: string, gate: string, stopId = ""): Promise<SettledScan[]> {
    const settled: SettledScan[] = [];
    for (;;) {
      const waiting = await this.db.getAllFromIndex("scans", "byShow", [showId, 0]);
      if (waiting.length === 0 && settled.length > 0) break;
      const batchGate = waiting[0]?.gate ?? gate;
      const batchStop = waiting[0] ? (waiting[0].stopId ?? "") : stopId;
      const batch = waiting.filter((s) => s.gate === batchGate && (s.stopId ?? "") === batchStop).slice(0, BATCH);
      const offset = await this.offset();
      const sentAt = Date.now();
      const r = await this.api.tickets.syncGateScans({
        showId: BigInt(showId),
        deviceId: this.deviceId,
        gate: batchGate,
        stopId: batchStop,
        deviceTime: ts(sentAt),
        clockOffset: offset === undefined ? undefined : { seconds: BigInt(Math.trunc(offset / 1000)), nanos: (offset % 1000) * 1e6 },
        pending: waiting.length - batch.length,
        scans: batch.map((s) => ({
          scanId: s.scanId,
          scannedAt: ts(s.scannedAt),
          ticket: s.code ? { case: "code" as const, value: s.code } : { case: "ticketId" as const, value: s.typedId ?? s.ticketId },
        })),
      });
      await this.measured(sentAt, ms(r.serverTime));
      const outcomes = ["", "admitted", "duplicate", "refunded", "invalid", "boards_elsewhere"];
      const tx = this.db.transaction("scans", "readwrite");
      for (const [i, s] of batch.entries()) {
        const got = r.scans[i];
        void tx.store.put({ ...s, synced: 1, outcome: outcomes[got?.outcome ?? 0] ?? "" });
        if (got) settled.push(got);
      }
      await tx.done;
      await this.countPending(showId);
      if (batch.length === 0) break; // a heartbeat: nothing was waiting
    }
    return settled;
  }

  /** The supervisor's view of the show's gates. */
  async status(showId: string): Promise<GetGateStatusResponse> {
    return this.api.tickets.getGateStatus({ showId: BigInt(showId) });
  }

  /**
   * Runs the background work for a show until the returned function is
   * called: at once, when the network returns, and every SYNC_EVERY_MS
   * while it is there, sync the scans waiting, download the list when it
   * is missing or old, and read the supervisor's view. gate and stopId
   * say where the device stands now (a heartbeat's gate and stop).
   */
  watch(showId: string, gate: () => string, stopId: () => string = () => ""): () => void {
    let stopped = false;
    const run = async () => {
      if (stopped || this.running) return;
      this.changed({ online: navigator.onLine });
      await this.countPending(showId);
      if (!navigator.onLine) return;
      this.running = true;
      try {
        const list = await this.db.get("lists", showId);
        this.changed({ list });
        await this.sync(showId, gate(), stopId());
        this.changed({ lastSyncAt: Date.now(), needsSignIn: false });
        if (!list || Date.now() - list.fetchedAt > LIST_FRESH_MS) await this.download(showId);
        this.changed({ status: await this.status(showId) });
      } catch (e) {
        if (this.errors.signedOut(e)) this.changed({ needsSignIn: true });
        else if (!this.errors.networkFailed(e)) console.warn("gate sync", e);
      } finally {
        this.running = false;
      }
    };
    const online = () => void run();
    const offline = () => this.changed({ online: false });
    addEventListener("online", online);
    addEventListener("offline", offline);
    const timer = setInterval(online, SYNC_EVERY_MS);
    this.changed({ list: undefined, status: undefined, lastSyncAt: undefined });
    void this.db.get("lists", showId).then((list) => !stopped && this.changed({ list }));
    void this.keys().then(prepare).catch(() => undefined);
    void run();
    return () => {
      stopped = true;
      clearInterval(timer);
      removeEventListener("online", online);
      removeEventListener("offline", offline);
    };
  }

  /** Runs a sync now (the supervisor's button, and after a scan online). */
  async syncNow(showId: string, gate: string, stopId = ""): Promise<void> {
    if (!navigator.onLine || this.running) return;
    this.running = true;
    try {
      await this.sync(showId, gate, stopId);
      this.changed({ lastSyncAt: Date.now(), status: await this.status(showId) });
    } catch (e) {
      if (!this.errors.networkFailed(e)) console.warn("gate sync", e);
    } finally {
      this.running = false;
    }
  }
}
