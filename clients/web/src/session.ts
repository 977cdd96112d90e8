// Who is signed in: the token in sessionStorage (gone when the tab
// closes), taken from the dev sign-in or from the fragment the OIDC
// sign-in redirects back with (#token=…&expires_at=…), and the API
// client that sends it.
import { createSeatghorClient } from "@seatghor/client";
import type { SeatghorClient } from "@seatghor/client";

const TOKEN_KEY = "seatghor.token";

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
 * Takes a token the OIDC sign-in left in the fragment, on whatever page,
 * and removes the fragment from the address bar (and so from history).
 */
export function takeTokenFromFragment(): void {
  if (!location.hash.includes("token=")) return;
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  if (token) saveSession(token);
  history.replaceState(history.state, "", location.pathname + location.search);
}

export async function loadConfig(): Promise<SiteConfig> {
  try {
    const r = await fetch("/auth/config.json");
    if (r.ok) return (await r.json()) as SiteConfig;
  } catch {
    // fall through: no sign-in offered
  }
  return { devSignIn: false, oidcSignIn: false, testPayments: false };
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
export function newClient(): SeatghorClient {
  return createSeatghorClient({
    baseUrl: location.origin,
    token: () => loadSession()?.token,
  });
}
