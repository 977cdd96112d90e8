// Sign-in: in dev a clearly marked dev sign-in (any name, a role, no
// password); with OIDC, the provider's page through /auth/login, which
// comes back with the token in the fragment (session.ts takes it); where
// the server sends SMS, by mobile number and a code (pages/phone.tsx, a
// chunk of its own; decision 0436). Someone signed in here signs out
// first: a session is never replaced (decision 0289). A buyer without an
// account finds tickets by ticket number (/find).
import { useState } from "preact/hooks";

import { ErrorNote, Lazy, Link, phoneSignInForm, useApp, whoName } from "../app.js";
import { clearSession, devSignIn, startSignIn } from "../session.js";

export function SignInPage() {
  const { t, config, session, setSession, go } = useApp();
  const next = new URLSearchParams(location.search).get("next") || "/";
  const safeNext = next.startsWith("/") && !next.startsWith("//") ? next : "/";
  const [name, setName] = useState("");
  const [role, setRole] = useState("user");
  const [err, setErr] = useState<unknown>();
  if (session) {
    return (
      <>
        <h1 tabIndex={-1}>{t.signIn}</h1>
        <p id="signed-in">
          {t.signedInAs} <strong>{whoName(t, session)}</strong>. {t.signOutToSwitch}
        </p>
        <p>
          <button
            type="button"
            onClick={() => {
              clearSession();
              setSession(undefined);
            }}
          >
            {t.signOut}
          </button>
        </p>
      </>
    );
  }
  return (
    <>
      <h1 tabIndex={-1}>{t.signIn}</h1>
      {config.oidcSignIn && (
        <p>
          <a
            class="button primary"
            id="oidc"
            href={`/signin?next=${encodeURIComponent(safeNext)}`}
            onClick={(e) => {
              // The one-time value is made and kept at the click, in this
              // tab (a link opened in another tab lands on this page there).
              e.preventDefault();
              location.assign(startSignIn(safeNext));
            }}
          >
            {t.signInWithProvider}
          </a>
        </p>
      )}
      {config.devSignIn && (
        <form
          class="dev"
          onSubmit={async (e) => {
            e.preventDefault();
            setErr(undefined);
            try {
              setSession(await devSignIn(name, role));
              go(safeNext, true);
            } catch (x) {
              setErr(x);
            }
          }}
        >
          <h2>
            <span class="badge">DEV</span> {t.devSignIn}
          </h2>
          <p class="note dev">{t.devSignInNote}</p>
          <label>
            {t.name}
            <input id="dev-name" required value={name} pattern="[a-zA-Z0-9][a-zA-Z0-9._\-]{0,63}" autocomplete="username"
              onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            {t.role}
            <select id="dev-role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
              <option value="user">{t.roleUser}</option>
              <option value="operator">{t.roleOperator}</option>
              <option value="admin">{t.roleAdmin}</option>
            </select>
          </label>
          <button type="submit" class="primary" id="dev-submit">
            {t.signIn}
          </button>
          <ErrorNote err={err} />
        </form>
      )}
      {config.phoneSignIn && <Lazy load={phoneSignInForm} next={safeNext} />}
      {!config.devSignIn && !config.oidcSignIn && !config.phoneSignIn && <p class="note">{t.noSignIn}</p>}
      <p>
        <Link href="/find" id="find-link">{t.findByNumber}</Link>
      </p>
    </>
  );
}
