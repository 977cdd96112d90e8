// Reading and verifying tickets' codes on the gate device, with no network
// and no secret (decision 0390): a code is
// "SGT3.<kid>.<base64url(ticket id "|" place)>.<base64url(Ed25519 signature)>",
// the signature of the text before its last dot, verified with the public
// key of kid (TicketService.GetTicketKeys). The browser's WebCrypto
// verifies Ed25519 where it can; elsewhere @noble/ed25519, loaded only
// then. HMAC codes of before (SGT2, SGT1) can be read but not verified here:
// the gate admits them only by its admission list, as a ticket id typed in.

/** A public key of the tickets' codes. */
export interface PublicKey {
  kid: string;
  raw: Uint8Array;
}

/** What a scanned value is, as far as the device can tell. */
export type Reading =
  | { ok: true; ticketId: string; place: string; signed: boolean }
  | { ok: false; why: "forged" | "unknownKey" | "notACode" };

/** Which implementation verified the last signature. */
export type Verifier = "webcrypto" | "library";

let verifier: Verifier | undefined;
const imported = new Map<string, Promise<CryptoKey | undefined>>();

/** Which implementation verifies signatures here, once one has. */
export function verifiedWith(): Verifier | undefined {
  return verifier;
}

function unbase64url(s: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return undefined;
  try {
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** The key as WebCrypto's, or undefined where WebCrypto has no Ed25519. */
function webCryptoKey(k: PublicKey): Promise<CryptoKey | undefined> {
  let p = imported.get(k.kid);
  if (!p) {
    p = crypto.subtle
      .importKey("raw", k.raw as BufferSource, { name: "Ed25519" }, false, ["verify"])
      .catch(() => undefined);
    imported.set(k.kid, p);
  }
  return p;
}

/**
 * Readies the verification of codes signed by keys while the network is
 * there: WebCrypto's keys, or, where the browser has no Ed25519, the
 * library's code (a chunk of its own that could not be fetched offline).
 */
export async function prepare(keys: PublicKey[]): Promise<void> {
  if (keys.length === 0) return;
  const ok = await Promise.all(keys.map(webCryptoKey));
  if (ok.every((k) => k !== undefined)) {
    verifier = "webcrypto";
    return;
  }
  await import("@noble/ed25519");
  verifier = "library";
}

async function verifySignature(k: PublicKey, sig: Uint8Array, msg: Uint8Array): Promise<boolean> {
  const key = await webCryptoKey(k);
  if (key) {
    verifier = "webcrypto";
    return crypto.subtle.verify({ name: "Ed25519" }, key, sig as BufferSource, msg as BufferSource).catch(() => false);
  }
  const ed = await import("@noble/ed25519");
  verifier = "library";
  // RFC 8032's strict rules, as WebCrypto and the server's Go apply them.
  return ed.verifyAsync(sig, msg, k.raw, { zip215: false }).catch(() => false);
}

/** Reads a scanned code and verifies its signature with keys. */
export async function readCode(code: string, keys: PublicKey[]): Promise<Reading> {
  const parts = code.split(".");
  const payloadOf = (p: string): { ticketId: string; place: string } | undefined => {
    const raw = unbase64url(p);
    if (!raw) return undefined;
    const text = new TextDecoder().decode(raw);
    const bar = text.indexOf("|");
    return bar < 0 ? undefined : { ticketId: text.slice(0, bar), place: text.slice(bar + 1) };
  };
  if (parts.length === 4 && parts[0] === "SGT3") {
    const key = keys.find((k) => k.kid === parts[1]);
    if (!key) return { ok: false, why: "unknownKey" };
    const sig = unbase64url(parts[3]);
    const payload = payloadOf(parts[2]);
    if (!sig || sig.length !== 64 || !payload) return { ok: false, why: "forged" };
    const msg = new TextEncoder().encode(code.slice(0, code.lastIndexOf(".")));
    if (!(await verifySignature(key, sig, msg))) return { ok: false, why: "forged" };
    return { ok: true, signed: true, ...payload };
  }
  // An HMAC code: its ticket is readable, its signature only the server's.
  const old = parts.length === 4 && parts[0] === "SGT2" ? parts[2] : parts.length === 3 && parts[0] === "SGT1" ? parts[1] : undefined;
  const payload = old !== undefined ? payloadOf(old) : undefined;
  if (payload) return { ok: true, signed: false, ...payload };
  return { ok: false, why: "notACode" };
}

/** The show a ticket id names ("tkt_<show>_<random>_<position>"), or undefined. */
export function showOfTicket(ticketId: string): string | undefined {
  return /^tkt_([1-9][0-9]*)_[a-z0-9]+_[0-9]{3,}$/.exec(ticketId)?.[1];
}
