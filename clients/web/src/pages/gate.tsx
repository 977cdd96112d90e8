// The gate: pick the show, scan a ticket's QR with the camera (the
// browser's BarcodeDetector, where there is one) or type its code or id,
// and read the answer in large type, with the count of the show's tickets
// checked in at every gate so far (each scan's answer carries it).
import { useEffect, useRef, useState } from "preact/hooks";
import { Code, ConnectError } from "@seatghor/client";
import type { CheckInTicketResponse, Show } from "@seatghor/client";

import { NeedSession, errorText, useApp } from "../app.js";
import { clock, digits, tsDate } from "../i18n.js";

interface Detector {
  detect(source: HTMLVideoElement): Promise<{ rawValue: string }[]>;
}
declare global {
  // eslint-disable-next-line no-var
  var BarcodeDetector: (new (opts: { formats: string[] }) => Detector) | undefined;
}

type Verdict = { kind: "ok"; r: CheckInTicketResponse } | { kind: "again"; r: CheckInTicketResponse } | { kind: "bad"; why: string };

export function GatePage() {
  return (
    <NeedSession>
      <GateInner />
    </NeedSession>
  );
}

function GateInner() {
  const { t, api, lang, session } = useApp();
  const [shows, setShows] = useState<Show[]>([]);
  const [show, setShow] = useState(new URLSearchParams(location.search).get("show") ?? "");
  const [gate, setGate] = useState(localStorage.getItem("seatghor.gate") ?? "gate-1");
  const [code, setCode] = useState("");
  const [verdict, setVerdict] = useState<Verdict>();
  const [count, setCount] = useState<bigint | null>(null);
  const [scanning, setScanning] = useState(false);
  const video = useRef<HTMLVideoElement>(null);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    api.catalog
      .listShows({ pageSize: 200 })
      .then((r) => {
        setShows(r.shows);
        if (!show && r.shows[0]) setShow(String(r.shows[0].showId));
      })
      .catch(() => setShows([]));
  }, []);
  useEffect(() => setCount(null), [show]);

  async function check(raw: string) {
    const value = raw.trim();
    if (!value || !show) return;
    try {
      const ticket = value.startsWith("tkt_") ? { case: "ticketId" as const, value } : { case: "code" as const, value };
      const r = await api.tickets.checkInTicket({ showId: BigInt(show), gate, ticket });
      setCount(r.admittedCount);
      if (r.admitted) {
        setVerdict({ kind: "ok", r });
      } else {
        setVerdict({ kind: "again", r });
      }
    } catch (e) {
      const why = e instanceof ConnectError && e.code === Code.PermissionDenied ? t.gateOnly : errorText(e);
      setVerdict({ kind: "bad", why });
    }
    setCode("");
    input.current?.focus();
  }

  // The camera, where the browser can read QR codes.
  useEffect(() => {
    if (!scanning || !globalThis.BarcodeDetector || !video.current) return;
    const detector = new globalThis.BarcodeDetector({ formats: ["qr_code"] });
    let stream: MediaStream | undefined;
    let stopped = false;
    let last = "";
    void navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" } }).then(async (s) => {
      stream = s;
      const v = video.current!;
      v.srcObject = s;
      await v.play();
      while (!stopped) {
        const found = await detector.detect(v).catch(() => []);
        const value = found[0]?.rawValue;
        if (value && value !== last) {
          last = value;
          await check(value);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    });
    return () => {
      stopped = true;
      stream?.getTracks().forEach((tr) => tr.stop());
    };
  }, [scanning, show, gate]);

  if (session && session.role === "user") {
    // Gate staff are operators in their organisation (decision 0075);
    // the server decides, this only saves a buyer a useless page.
    return <p class="note">{t.gateOnly}</p>;
  }
  const r = verdict && verdict.kind !== "bad" ? verdict.r : undefined;
  const where = r?.ticket ? r.ticket.seats.join(", ") || r.ticket.seat || r.ticket.gaArea : "";
  return (
    <>
      <h1 tabIndex={-1}>{t.gateTitle}</h1>
      <form
        class="gate"
        onSubmit={(e) => {
          e.preventDefault();
          void check(code);
        }}
      >
        <label>
          {t.gateShow}
          <select id="gate-show" value={show} onChange={(e) => setShow(e.currentTarget.value)}>
            {shows.map((s) => (
              <option key={String(s.showId)} value={String(s.showId)}>
                {digits(String(s.showId), lang)} · {s.title}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t.gateName}
          <input id="gate-name" value={gate} onInput={(e) => {
            setGate(e.currentTarget.value);
            localStorage.setItem("seatghor.gate", e.currentTarget.value);
          }} />
        </label>
        <label class="wide">
          {t.code}
          <input id="gate-code" ref={input} value={code} autocomplete="off" onInput={(e) => setCode(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" id="gate-check">
          {t.check}
        </button>
      </form>
      {globalThis.BarcodeDetector ? (
        <p>
          <button type="button" onClick={() => setScanning(!scanning)}>
            {scanning ? t.stopScan : t.scan}
          </button>
        </p>
      ) : (
        <p class="note">{t.noCamera}</p>
      )}
      {scanning && <video ref={video} class="camera" muted playsInline />}
      <div id="verdict" role="status" aria-live="assertive" class={`verdict ${verdict?.kind ?? ""}`}>
        {verdict?.kind === "ok" && (
          <>
            <p class="huge">✓ {t.admitted}</p>
            <p>{where}</p>
          </>
        )}
        {verdict?.kind === "again" && (
          <>
            <p class="huge">
              ⚠ {t.already(r?.ticket?.checkedInAt ? clock(tsDate(r.ticket.checkedInAt)!, lang) : "", r?.ticket?.checkedInGate ?? "")}
            </p>
            <p>{where}</p>
          </>
        )}
        {verdict?.kind === "bad" && (
          <>
            <p class="huge">✗ {t.notValid}</p>
            <p>{verdict.why}</p>
          </>
        )}
      </div>
      {count !== null && <p id="gate-count">{t.admittedCount(digits(count, lang))}</p>}
    </>
  );
}
