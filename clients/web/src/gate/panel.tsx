// The gate's offline state and the supervisor's panel (docs/gate-offline.md):
// whether the device is online, whether its copy of the list is ready and
// how many of its scans wait to sync; per gate (device) of the show, when it
// last synced, what it still held then and how its scans settled; and the
// conflicts: scans admitted with no network that settled as duplicates
// (with both gates and times), of cancelled or refunded tickets, invalid,
// or, on a trip with stops, of tickets boarding at another stop (decision
// 0408).
//
// It is a Preact tree of its own, rendered into an element the page gives
// (renderPanel): this chunk is built apart from the page's bundle (with its
// own copy of Preact), so the buyer's first load carries none of it.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { ScanOutcome, SettledScan } from "@seatghor/client";

import type { Lang } from "../i18n.js";
import type { GateEngine } from "./engine.js";
import { stopName } from "./rules.js";
import type { StopName } from "./rules.js";
import { gateStrings } from "./strings.js";
import { verifiedWith } from "./verify.js";

const bnDigits = "০১২৩৪৫৬৭৮৯";

/** Writes the ASCII digits of s in Bengali digits in the Bengali UI. */
export function digits(s: string | number | bigint, lang: Lang): string {
  const t = String(s);
  return lang === "bn" ? t.replace(/[0-9]/g, (d) => bnDigits[Number(d)]) : t;
}

/** A time of day with seconds, in zone: scans at two gates are seconds apart. */
export function clockSeconds(d: Date | number | undefined, lang: Lang, zone: string): string {
  if (d === undefined) return "";
  const s = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZone: zone })
    .format(typeof d === "number" ? new Date(d) : d);
  return digits(s, lang);
}

// ScanOutcome's values, written here: importing the enum would share the
// SDK's code between this chunk and the page's.
const DUPLICATE: ScanOutcome = 2;
const REFUNDED: ScanOutcome = 3;
const BOARDS_ELSEWHERE: ScanOutcome = 5;

const toDate = (t: { seconds: bigint; nanos: number } | undefined) =>
  t ? new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6)) : undefined;

export function useEngineState(engine: GateEngine) {
  const [, setTick] = useState(0);
  useEffect(() => engine.subscribe(() => setTick((n) => n + 1)), [engine]);
  return engine.state();
}

/** One conflict in words. */
function conflictText(c: SettledScan, lang: Lang, zone: string, stops: readonly StopName[] | undefined): { kind: string; text: string } {
  const g = gateStrings(lang);
  const gate = c.gate || (c.deviceId ? c.deviceId : g.online_);
  const own = clockSeconds(toDate(c.settledTime), lang, zone);
  switch (c.outcome) {
    case DUPLICATE:
      return {
        kind: g.duplicate,
        text: g.duplicateOf(c.deviceId ? gate : `${gate} (${g.online_})`, own,
          c.admittedGate || c.admittedDeviceId || g.online_, clockSeconds(toDate(c.admittedAt), lang, zone)),
      };
    case REFUNDED:
      return { kind: g.refundedOutcome, text: g.scannedAt(gate, own) };
    case BOARDS_ELSEWHERE:
      return {
        kind: g.boardsElsewhereOutcome,
        text: c.boardingStopId
          ? `${g.scannedAt(gate, own)} — ${g.boardsAt(stopName(stops, c.boardingStopId, lang))}`
          : `${g.scannedAt(gate, own)}${c.detail ? ` — ${c.detail}` : ""}`,
      };
    default:
      return { kind: g.invalidOutcome, text: `${g.scannedAt(gate, own)}${c.detail ? ` — ${c.detail}` : ""}` };
  }
}

/** What the panel shows: the device's engine, for which show and gate. */
export interface PanelProps {
  engine: GateEngine;
  lang: Lang;
  zone: string;
  showId: string;
  gate: string;
  /** The stop of the trip the gate stands at; "" for none. */
  stopId?: string;
  /** The trip's stops, to name them; none for a show without stops. */
  stops?: readonly StopName[];
}

/** Renders (or updates) the panel in el; null clears it. */
export function renderPanel(el: HTMLElement, props: PanelProps | null): void {
  render(props ? <OfflinePanel {...props} /> : null, el);
}

function OfflinePanel(props: PanelProps) {
  const { engine, lang, zone } = props;
  const s = useEngineState(engine);
  const g = gateStrings(lang);
  const how = verifiedWith();
  const status = s.status;
  // The column of tickets boarding at another stop: on a trip with stops,
  // or once a device reported any.
  const elsewhere = (props.stops?.length ?? 0) > 0 || !!status?.devices.some((d) => d.boardsElsewhere > 0n);
  return (
    <section class="gate-offline" aria-label={g.supervisor}>
      <p id="gate-net" class={s.online ? "note" : "note error"} role="status">
        {s.online ? g.online : g.offline}
      </p>
      <p id="gate-ready">{s.list ? g.ready(digits(s.list.count, lang), clockSeconds(s.list.fetchedAt, lang, zone)) : g.notReady}</p>
      <p id="gate-pending">
        {g.pending(digits(s.pending, lang))} · {s.lastSyncAt ? g.lastSync(clockSeconds(s.lastSyncAt, lang, zone)) : g.notSynced}{" "}
        <button type="button" class="link" id="gate-sync" onClick={() => void engine.syncNow(props.showId, props.gate, props.stopId ?? "")}>
          {g.syncNow}
        </button>
      </p>
      {s.needsSignIn && <p class="note error">{g.signInToSync}</p>}
      {how && <p id="gate-verifier" class="note">{g.verifier(how === "webcrypto" ? g.verifierBuiltIn : g.verifierLibrary)}</p>}
      {status && (
        <>
          <h2>{g.supervisor}</h2>
          <table id="gate-devices">
            <thead>
              <tr>
                <th>{g.gateCol}</th>
                <th>{g.syncedCol}</th>
                <th>{g.pendingCol}</th>
                <th>{g.admittedCol}</th>
                <th>{g.conflictsCol}</th>
                {elsewhere && <th>{g.otherStopCol}</th>}
              </tr>
            </thead>
            <tbody>
              {status.devices.map((d) => (
                <tr key={d.deviceId}>
                  <td>
                    {d.gate || d.deviceId}
                    {d.deviceId === engine.deviceId ? ` (${g.thisDevice})` : ""}
                  </td>
                  <td>{clockSeconds(toDate(d.lastSyncAt), lang, zone)}</td>
                  <td>{digits(d.deviceId === engine.deviceId ? s.pending : d.pending, lang)}</td>
                  <td>{digits(d.admitted, lang)}</td>
                  <td>{digits(d.duplicates + d.refunded + d.invalid + d.boardsElsewhere, lang)}</td>
                  {elsewhere && <td class="boards-elsewhere">{digits(d.boardsElsewhere, lang)}</td>}
                </tr>
              ))}
            </tbody>
          </table>
          <p>{g.conflicts(digits(status.conflictCount, lang))}</p>
          <ul id="gate-conflicts">
            {status.conflicts.length === 0 && <li>{g.noConflicts}</li>}
            {status.conflicts.map((c) => {
              const { kind, text } = conflictText(c, lang, zone, props.stops);
              return (
                <li key={`${c.deviceId}/${c.scanId}`} data-ticket={c.ticketId}>
                  <strong>{kind}</strong> · {c.seat || c.gaArea} · <code>{c.ticketId}</code>: {text}
                </li>
              );
            })}
          </ul>
        </>
      )}
    </section>
  );
}
