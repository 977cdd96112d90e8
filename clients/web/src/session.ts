// Who is signed in: the token in sessionStorage (gone when the tab
// closes), taken from the dev sign-in, the phone sign-in or a guest's
// start (pages/phone.tsx, phone.ts), or from the fragment the OIDC
// sign-in redirects back with (#token=…&expires_at=…&site_state=…) when
// it answers the sign-in this tab started, and the API client that sends
// it.
import { createBuyerClient } from "@seatghor/client";
import type { BuyerClient } from "@seatghor/client";

const TOKEN_KEY = "seatghor.token";
// The one-time value of the OIDC sign-in this tab started (decision 0288).
const SIGNIN_KEY = "seatghor.signin";

export interface Session {
  token: string;
  userId: string;
  role: string;
  expiresAt: number; // unix seconds; 0: unknown
}

/** What the server says about sign-in (GET /auth/config.json). */
export interface SiteConfig {
  devSignIn: boolean;
  oidcSignIn: boolean;
  testPayments: boolean;
  /** The server sends SMS: phone sign-in and guest checkout (decisions 0436, 0437). */
  phoneSignIn: boolean;
}

function decode(token: string): Session | undefined {
  const part = token.split(".")[1];
  if (!part) return undefined;
  try {
    const json = atob(part.replace(/-/g, "+").replace(/_/g, "/"));
    const claims = JSON.parse(json) as { sub?: string; role?: string; exp?: number };
    if (!claims.sub) return undefined;
    return { token, userId: claims.sub, role: claims.role ?? "user", expiresAt: claims.exp ?? 0 };
  } catch {
    return undefined;
  }
}

/** The prefix of a guest's user id (StartGuest, decision 0437). */
const GUEST_PREFIX = "gs_";

/** Whether s is a guest's: no account, the tickets found by the order's contact phone. */
export function isGuest(s: Session | undefined): boolean {
  return !!s?.userId.startsWith(GUEST_PREFIX);
}

export function loadSession(): Session | undefined {
  let token: string | null = null;
  try {
    token = sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return undefined;
  }
  const s = token ? decode(token) : undefined;
  if (s && s.expiresAt > 0 && s.expiresAt * 1000 < Date.now()) {
    clearSession();
    return undefined;
  }
  return s;
}

export function saveSession(token: string): Session | undefined {
  const s = decode(token);
  if (s) sessionStorage.setItem(TOKEN_KEY, token);
  return s;
}

export function clearSession(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * Starts a sign-in through the identity provider from this tab: a fresh
 * one-time value (128 random bits) kept for the tab, which the server
 * carries through the sign-in and gives back next to the token (decision
 * 0288). Returns the address to send the browser to.
 */
export function startSignIn(returnTo: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const value = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  sessionStorage.setItem(SIGNIN_KEY, value);
  return `/auth/login?${new URLSearchParams({ return_to: returnTo, site_state: value })}`;
}

/**
 * Takes a token the OIDC sign-in left in the fragment, on whatever page,
 * only when it answers the sign-in this tab started (its site_state is
 * the value startSignIn kept, spent now) and nobody is signed in here: a
 * link carrying someone else's token changes nothing, and a session is
 * never replaced (decisions 0288, 0289). Either way the fragment leaves
 * the address bar (and so history). Says whether it took the token.
 */
export function takeTokenFromFragment(): boolean {
  if (!location.hash.includes("token=")) return false;
  const params = new URLSearchParams(location.hash.slice(1));
  history.replaceState(history.state, "", location.pathname + location.search);
  let started: string | null;
  try {
    started = sessionStorage.getItem(SIGNIN_KEY);
    sessionStorage.removeItem(SIGNIN_KEY);
  } catch {
    return false; // no storage: no sign-in was started here
  }
  const token = params.get("token");
  if (!token || !started || params.get("site_state") !== started || loadSession()) return false;
  return saveSession(token) !== undefined;
}

export async function loadConfig(): Promise<SiteConfig> {
  // What a server that does not say offers (an older one has no phoneSignIn).
  const none: SiteConfig = { devSignIn: false, oidcSignIn: false, testPayments: false, phoneSignIn: false };
  try {
    const r = await fetch("/auth/config.json");
    if (r.ok) return { ...none, ...((await r.json()) as Partial<SiteConfig>) };
  } catch {
    // fall through: no sign-in offered
  }
  return none;
}

export async function devSignIn(name: string, role: string): Promise<Session> {
  const r = await fetch("/auth/dev-token", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name, role }),
  });
  const body = (await r.json()) as { token?: string; error?: string };
  if (!r.ok || !body.token) throw new Error(body.error ?? `dev sign-in: HTTP ${r.status}`);
  const s = saveSession(body.token);
  if (!s) throw new Error("dev sign-in: the token cannot be read");
  return s;
}

/** The API client of this page: same origin, the current token. */
export function newClient(): BuyerClient {
  return createBuyerClient({
    baseUrl: location.origin,
    token: () => loadSession()?.token,
  });
}
