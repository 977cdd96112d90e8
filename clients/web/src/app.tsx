// The shell: header (navigation, language, sign-in), the router (history
// API; the server answers every page path with index.html) and what every
// page shares through AppContext.
import { createContext } from "preact";
import { useContext, useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { ComponentChildren, ComponentType } from "preact";
import { Code, ConnectError, UnauthenticatedError, asSeatghorError } from "@seatghor/client";
import type { BuyerClient } from "@seatghor/client";

import { saveLang, savedLang, strings } from "./i18n.js";
import { sayError } from "./say.js";
import { reasonsBn, reasonsEn } from "./reasons.js";
import type { Lang, Strings } from "./i18n.js";
import { clearSession, isGuest, loadSession, newClient } from "./session.js";
import { forgetSaved } from "./offline.js";
import type { Session, SiteConfig } from "./session.js";
import { Home } from "./pages/home.js";
import { ShowPage } from "./pages/show.js";
import { WaitPage } from "./pages/wait.js";
import { OrderPage } from "./pages/order.js";
import { PassengersPage } from "./pages/passengers.js";
import { TicketsPage } from "./pages/tickets.js";
import { SignInPage } from "./pages/signin.js";

export interface App {
  lang: Lang;
  t: Strings;
  session: Session | undefined;
  setSession: (s: Session | undefined) => void;
  config: SiteConfig;
  api: BuyerClient;
  go: (path: string, replace?: boolean) => void;
}

export const AppContext = createContext<App>(undefined as unknown as App);

export function useApp(): App {
  return useContext(AppContext);
}

/** A link that routes in the page. */
export function Link(props: { href: string; class?: string; id?: string; children: ComponentChildren }) {
  const { go } = useApp();
  return (
    <a
      href={props.href}
      class={props.class}
      id={props.id}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        go(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

export { sayError };

export function ErrorNote(props: { err: unknown }) {
  const { t, lang } = useApp();
  if (!props.err) return null;
  return (
    <p class="note error" role="alert">
      {sayError(props.err, lang)}
      {props.err instanceof UnauthenticatedError && (
        <>
          {" "}
          <Link href={`/signin?next=${encodeURIComponent(location.pathname + location.search)}`}>{t.signIn}</Link>
        </>
      )}
    </p>
  );
}

/** Whether the browser says it is online, followed as it changes. */
export function useOnline(): boolean {
  const [online, setOnline] = useState(navigator.onLine);
  useEffect(() => {
    const set = () => setOnline(navigator.onLine);
    addEventListener("online", set);
    addEventListener("offline", set);
    return () => {
      removeEventListener("online", set);
      removeEventListener("offline", set);
    };
  }, []);
  return online;
}

/**
 * On a page that works only online (seat map, hold, order and payment,
 * waiting room), says so while the browser is offline (decision 0399).
 */
export function NeedsNetwork() {
  const { t } = useApp();
  if (useOnline()) return null;
  return (
    <p class="note warn" id="needs-network" role="status">
      {t.needsNetwork}
    </p>
  );
}

/**
 * Asks for a sign-in before showing children; where a buyer is about to
 * buy (guest), also offers to go on as a guest when the server sends SMS
 * (decision 0437).
 */
export function NeedSession(props: { children: ComponentChildren; guest?: boolean }) {
  const { session, t } = useApp();
  if (session) return <>{props.children}</>;
  return (
    <>
      <p class="note">
        {t.needSignIn} <Link href={`/signin?next=${encodeURIComponent(location.pathname + location.search)}`}>{t.signIn}</Link>
      </p>
      {props.guest && <GuestStart />}
    </>
  );
}

/**
 * "Continue as guest": a guest's token (StartGuest), kept as the session,
 * and the page goes on where it was, signed in. Its code (the phone
 * sign-in's chunk, with its service) loads at the tap, not with the site.
 */
export function GuestStart() {
  const { t, config, setSession } = useApp();
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<unknown>();
  if (!config.phoneSignIn) return null;
  return (
    <div class="guest">
      <button
        type="button"
        id="guest-start"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setErr(undefined);
          try {
            setSession(await (await import("./pages/phone.js")).startGuest());
          } catch (e) {
            setErr(e);
            setBusy(false);
          }
        }}
      >
        {t.continueAsGuest}
      </button>
      <ErrorNote err={err} />
    </div>
  );
}

/** What the header and the sign-in page call the one signed in: a guest is "Guest", not an id. */
export function whoName(t: Strings, s: Session): string {
  return isGuest(s) ? t.guest : s.userId;
}

/** Loads a lazy page's component (a dynamic import: a chunk of its own). */
type Loader<P> = () => Promise<ComponentType<P>>;

// The pages not every visitor needs, each a chunk of its own outside the
// first load (decision 0160): staff's gate, the phone sign-in, finding
// tickets by ticket number.
export const gatePage: Loader<object> = () => import("./pages/gate.js").then((m) => m.GatePage);
export const phoneSignInForm: Loader<{ next: string }> = () => import("./pages/phone.js").then((m) => m.PhoneSignIn);
export const findPage: Loader<{ orderId?: string; mine?: boolean }> = () => import("./pages/find.js").then((m) => m.FindPage);

// The components loaded so far: drawn at once when shown again.
const loaded = new Map<unknown, unknown>();

// Whether a navigation still owes its page's heading the focus (go), for
// a lazy page whose heading is drawn once its chunk is there.
let headingDue = false;

function focusHeading() {
  const h = document.querySelector<HTMLElement>("main h1");
  if (!h) return;
  headingDue = false;
  h.focus();
}

/**
 * A page whose code is a chunk of its own, drawn once loaded. One Lazy may
 * be handed another page (the route changed): it draws what it is given.
 */
export function Lazy<P extends object>({ load, ...props }: { load: Loader<P> } & P) {
  const { t } = useApp();
  const [, setArrived] = useState(0);
  const [err, setErr] = useState<unknown>();
  const Page = loaded.get(load) as ComponentType<P> | undefined;
  useEffect(() => {
    if (Page) return;
    let gone = false;
    setErr(undefined);
    load().then(
      (c) => {
        loaded.set(load, c);
        if (!gone) setArrived((n) => n + 1);
      },
      (e) => !gone && setErr(e),
    );
    return () => {
      gone = true;
    };
  }, [load]);
  useEffect(() => {
    if (Page && headingDue) focusHeading();
  }, [Page]);
  if (Page) return <Page {...(props as P)} />;
  return err ? <ErrorNote err={err} /> : <p>{t.loading}</p>;
}

/**
 * Where the tab is: the path and the query string of the address, and a
 * count of navigations, so that a page whose address stays the same (the
 * same search again) still hears that it was asked for.
 */
export interface Place {
  path: string;
  search: string;
  visit: number;
}

/**
 * A staff page's own bundle (the manifest, decision 0442; the counter,
 * 0443; the console, 0446): built apart into assets/<name>.js, it shares
 * no chunk with app.js, so a buyer's first load carries none of it. It
 * renders into an element the shell gives it and answers what unmounts it.
 */
type StaffBundles = {
  "manifest.js": typeof import("./manifest/index.js");
  "counter.js": typeof import("./counter/index.js");
  "console.js": typeof import("./console/index.js");
};

/** What a staff bundle's mount is given besides the language. */
type StaffProps<K extends keyof StaffBundles> = Omit<Parameters<StaffBundles[K]["mount"]>[1], "lang">;

/** Loads a staff page's bundle by its address for a signed-in caller. */
function StaffRoute<K extends keyof StaffBundles>(props: { bundle: K; props: StaffProps<K>; deps: unknown[] }) {
  const { lang, session } = useApp();
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!session || !el.current) return;
    const at = el.current;
    let unmount: (() => void) | undefined;
    let gone = false;
    void (import(/* a staff page's own bundle */ new URL(props.bundle, import.meta.url).href) as Promise<StaffBundles[K]>)
      .then((m) => {
        // Each bundle's mount takes its own props (StaffProps), checked
        // where the route names the bundle.
        if (!gone) unmount = (m.mount as (el: HTMLElement, p: object) => () => void)(at, { ...props.props, lang });
      });
    return () => {
      gone = true;
      unmount?.();
    };
  }, [...props.deps, props.bundle, lang, session]);
  if (!session) return <NeedSession>{null}</NeedSession>;
  return <div ref={el} />;
}

function route(place: Place) {
  const parts = place.path.split("/").filter(Boolean);
  switch (parts[0]) {
    case undefined:
    case "search":
      return <Home place={place} />;
    case "show":
      return <ShowPage showId={BigInt(parts[1] ?? "0")} search={place.search} key={parts[1] + place.search} />;
    case "wait":
      return <WaitPage showId={BigInt(parts[1] ?? "0")} key={parts[1]} />;
    case "order":
      return <OrderPage orderId={parts[1] ?? ""} key={parts[1]} />;
    case "passengers":
      return <PassengersPage holdId={parts[1] ?? ""} key={parts[1]} />;
    case "tickets":
      return <TicketsPage />;
    case "gate":
      return <Lazy load={gatePage} />;
    case "signin":
      return <SignInPage />;
    case "find":
      return <Lazy load={findPage} orderId={new URLSearchParams(place.search).get("order") ?? ""} key={place.search} />;
    case "t": // the booking SMS's short link (decision 0471)
      return <Lazy load={findPage} orderId={parts[1] ?? ""} mine key={parts[1]} />;
    case "manifest":
      return <StaffRoute bundle="manifest.js" props={{ showId: BigInt(parts[1] ?? "0") }} deps={[parts[1]]} key={parts[1]} />;
    case "counter":
      return <StaffRoute bundle="counter.js" props={{}} deps={[]} />;
    case "console":
      return <StaffRoute bundle="console.js" props={{}} deps={[]} />;
    default:
      return <p class="note">404</p>;
  }
}

export function Root(props: { config: SiteConfig }) {
  const [lang, setLang] = useState<Lang>(savedLang());
  const [session, setSession] = useState<Session | undefined>(loadSession());
  // The router follows the whole address: a second search on the results
  // page changes only the query string, and Back and Forward must show the
  // search of the address they land on.
  const [place, setPlace] = useState<Place>(() => ({ path: location.pathname, search: location.search, visit: 0 }));
  const arrived = () => setPlace((p) => ({ path: location.pathname, search: location.search, visit: p.visit + 1 }));
  const api = useMemo(newClient, []);
  const online = useOnline();
  useEffect(() => {
    const pop = () => arrived();
    addEventListener("popstate", pop);
    return () => removeEventListener("popstate", pop);
  }, []);
  useEffect(() => {
    document.documentElement.lang = lang;
    document.title = strings(lang).brand;
  }, [lang]);
  const app: App = {
    lang,
    t: strings(lang),
    session,
    setSession,
    config: props.config,
    api,
    go: (to, replace) => {
      // The same address again (a search asked twice) runs again but adds
      // no second history entry.
      const same = new URL(to, location.href).href === location.href;
      if (replace || same) history.replaceState(null, "", to);
      else history.pushState(null, "", to);
      arrived();
      scrollTo(0, 0);
      // The new page's heading, for screen readers and keyboards (a lazy
      // page's once it is drawn).
      headingDue = true;
      requestAnimationFrame(focusHeading);
    },
  };
  const t = app.t;
  const staff = session && (session.role === "operator" || session.role === "admin");
  return (
    <AppContext.Provider value={app}>
      <a class="skip" href="#main">
        {lang === "bn" ? "মূল অংশে যান" : "Skip to content"}
      </a>
      <header class="top">
        <Link href="/" class="brand">
          {t.brand}
        </Link>
        <nav aria-label={lang === "bn" ? "প্রধান" : "Main"}>
          <Link href="/">{t.navSearch}</Link>
          <Link href="/tickets">{t.navTickets}</Link>
          {staff && <Link href="/gate">{t.navGate}</Link>}
        </nav>
        <div class="tools">
          <button
            type="button"
            id="lang"
            class="link"
            lang={lang === "en" ? "bn" : "en"}
            aria-label={t.switchLangLabel}
            onClick={() => {
              const next = lang === "en" ? "bn" : "en";
              saveLang(next);
              setLang(next);
            }}
          >
            {t.switchLang}
          </button>
          {session ? (
            <span class="who">
              <span id="who">{whoName(t, session)}</span>{" "}
              <button
                type="button"
                class="link"
                onClick={() => {
                  // The tickets kept for offline go with the sign-out.
                  void forgetSaved(session.userId);
                  clearSession();
                  setSession(undefined);
                }}
              >
                {t.signOut}
              </button>
            </span>
          ) : (
            <Link href={`/signin?next=${encodeURIComponent(place.path + place.search)}`}>{t.signIn}</Link>
          )}
        </div>
      </header>
      {!online && (
        <p class="offline" id="offline" role="status">
          {t.offline}
        </p>
      )}
      <main id="main">{route(place)}</main>
    </AppContext.Provider>
  );
}
