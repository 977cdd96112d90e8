// The front page: trip search (origin, destination, date; typo tolerant on
// the server) and the events on sale. The search lives in the address
// (/search?from=…&to=…&date=…) so Back returns to the results.
import { useEffect, useState } from "preact/hooks";
import { ShowKind } from "@seatghor/client";
import type { Journey, Show, TripHit } from "@seatghor/client";

import { ErrorNote, GuestStart, Link, useApp } from "../app.js";
import type { Place } from "../app.js";
import { digits, operatorName, route, showName, taka, tsDate, showTime } from "../i18n.js";

export function Home(props: { place: Place }) {
  const { t, api, go, lang, session } = useApp();
  const { path, search, visit } = props.place;
  const params = new URLSearchParams(search);
  const [from, setFrom] = useState(params.get("from") ?? "");
  const [to, setTo] = useState(params.get("to") ?? "");
  const [date, setDate] = useState(params.get("date") ?? "");
  const [trips, setTrips] = useState<TripHit[] | undefined>();
  const [degraded, setDegraded] = useState(false);
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<unknown>();
  const [events, setEvents] = useState<Show[] | undefined>();

  const searched = path === "/search";
  // Every arrival at an address runs its search (a new one, the same one
  // again, or Back and Forward), and the form shows what was searched.
  useEffect(() => {
    setFrom(params.get("from") ?? "");
    setTo(params.get("to") ?? "");
    setDate(params.get("date") ?? "");
    setErr(undefined);
    if (!searched) {
      setBusy(false);
      return;
    }
    // An answer that comes after the next search was asked is dropped.
    let current = true;
    setBusy(true);
    api.search
      .searchTrips({ origin: params.get("from") ?? "", destination: params.get("to") ?? "", date: params.get("date") ?? "", pageSize: 20 })
      .then((r) => {
        if (!current) return;
        setTrips(r.trips);
        setDegraded(r.degraded);
      })
      .catch((e: unknown) => current && setErr(e))
      .finally(() => current && setBusy(false));
    return () => {
      current = false;
    };
  }, [path, search, visit]);

  useEffect(() => {
    if (!session) return;
    Promise.all([api.catalog.listShows({ kind: ShowKind.CONCERT, pageSize: 50 }), api.catalog.listShows({ kind: ShowKind.SPORT, pageSize: 50 })])
      .then(([a, b]) => setEvents([...a.shows, ...b.shows]))
      .catch(() => setEvents([]));
  }, [session]);

  return (
    <>
      <h1 tabIndex={-1}>{t.searchTrips}</h1>
      <form
        class="search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          const q = new URLSearchParams({ from, to, date });
          go(`/search?${q}`);
        }}
      >
        <label>
          {t.origin}
          <input id="from" name="from" value={from} onInput={(e) => setFrom(e.currentTarget.value)} autocomplete="off" />
        </label>
        <label>
          {t.destination}
          <input id="to" name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} autocomplete="off" />
        </label>
        <label>
          {t.date}
          <input id="date" name="date" type="date" lang={lang} value={date} onInput={(e) => setDate(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary">
          {t.search}
        </button>
      </form>
      <ErrorNote err={err} />
      {busy && <p aria-live="polite">{t.searching}</p>}
      {searched && trips && (
        <section aria-live="polite" aria-label={t.searchTrips}>
          {degraded && <p class="note">{t.degraded}</p>}
          {trips.length === 0 ? (
            <p class="note">{t.noTrips}</p>
          ) : (
            <ul class="cards" id="trips">
              {trips.map((h) => (
                <li class="card" key={`${h.showId}-${h.journey?.fromStopId ?? ""}-${h.journey?.toStopId ?? ""}`}>
                  {h.journey ? (
                    <JourneyCard hit={h} journey={h.journey} />
                  ) : (
                    <Link href={`/show/${h.showId}`} class="cardlink">
                      <strong>
                        {lang === "bn" && h.originBengali ? h.originBengali : h.originLabel || h.origin} →{" "}
                        {lang === "bn" && h.destinationBengali ? h.destinationBengali : h.destinationLabel || h.destination}
                      </strong>
                      <span>{operatorName(h, lang)}</span>
                      <span>
                        {t.departs}: {showTime(h.startsAtLocal, tsDate(h.startsAt), lang)}
                      </span>
                      <span>
                        {h.lowestPrice && t.from(taka(h.lowestPrice.amountMinor, lang))} ·{" "}
                        {t.seatsLeft(digits(h.seatsAvailable, lang))}
                      </span>
                    </Link>
                  )}
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
      <h2>{t.events}</h2>
      {!session ? (
        <>
          <p class="note">
            {t.signInForEvents} <Link href="/signin?next=/">{t.signIn}</Link>
          </p>
          <GuestStart />
        </>
      ) : !events ? (
        <p>{t.loading}</p>
      ) : events.length === 0 ? (
        <p class="note">{t.noEvents}</p>
      ) : (
        <ul class="cards" id="events">
          {events.map((s) => (
            <li class="card" key={String(s.showId)}>
              <Link href={`/show/${s.showId}`} class="cardlink">
                <strong>{showName(s.title, s, lang)}</strong>
                <span>{route(s, lang)}</span>
                <span>
                  {t.starts}: {showTime(s.startsAtLocal, tsDate(s.startsAt), lang)}
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** A hit of a coach with stops: the journey between the buyer's stops
 * (issue 24), its departure at the boarding counter and that pair's fare,
 * with the coach's whole route beside it. The seat map is asked for the
 * same journey (from and to in the address). */
function JourneyCard(props: { hit: TripHit; journey: Journey }) {
  const { t, lang } = useApp();
  const { hit: h, journey: j } = props;
  const from = (lang === "bn" && j.fromNameBn) || j.fromName;
  const to = (lang === "bn" && j.toNameBn) || j.toName;
  const counter = (lang === "bn" && j.boardingCounterNameBn) || j.boardingCounterName;
  const boards = j.boardingCounterId ? showTime(j.boardingAtLocal, tsDate(j.boardingAt), lang) : showTime(j.departsAtLocal, tsDate(j.departsAt), lang);
  const q = new URLSearchParams({ from: j.fromStopId, to: j.toStopId });
  return (
    <Link href={`/show/${h.showId}?${q}`} class="cardlink journey">
      <strong>
        {from} → {to}
      </strong>
      <span>
        {operatorName(h, lang)} · {t.onCoach(route(h, lang))}
      </span>
      <span class="boards">
        {t.boards}: {boards}
        {counter && ` · ${counter}`}
      </span>
      <span>
        {t.arrives}: {showTime(j.arrivesAtLocal, tsDate(j.arrivesAt), lang)}
      </span>
      <span>
        {h.lowestPrice && t.fare(taka(h.lowestPrice.amountMinor, lang))} · {t.seatsLeft(digits(h.seatsAvailable, lang))}
      </span>
    </Link>
  );
}
