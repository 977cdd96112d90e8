// The waiting room of an on-sale: join, then ask for the status as
// often as the server says (poll_after) until admitted; then the seat map,
// with the admitted token kept for the hold (Queue-Token).
import { useEffect, useState } from "preact/hooks";
import { SaleState } from "@seatghor/client";
import type { GetStatusResponse } from "@seatghor/client";

import { ErrorNote, NeedsNetwork, NeedSession, useApp } from "../app.js";
import { clock, digits, tsDate } from "../i18n.js";
import { queueTokenKey } from "./show.js";

/** How long "you are in" shows before the seat map. */
const ADMITTED_PAUSE_MS = 1500;

export function WaitPage(props: { showId: bigint }) {
  return (
    <>
      <NeedsNetwork />
      <NeedSession guest>
        <WaitInner showId={props.showId} />
      </NeedSession>
    </>
  );
}

function WaitInner({ showId }: { showId: bigint }) {
  const { t, api, lang, go } = useApp();
  const [st, setSt] = useState<GetStatusResponse>();
  const [err, setErr] = useState<unknown>();

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const step = (s: GetStatusResponse) => {
      if (stopped) return;
      setSt(s);
      if (s.admitted && s.admittedToken) {
        sessionStorage.setItem(queueTokenKey(showId), s.admittedToken);
        timer = setTimeout(() => go(`/show/${showId}`, true), ADMITTED_PAUSE_MS);
        return;
      }
      if (s.state === SaleState.NO_QUEUE) {
        // No queue after all: the seat map takes holds without a token.
        sessionStorage.setItem(queueTokenKey(showId), "-");
        go(`/show/${showId}`, true);
        return;
      }
      if (s.soldOut || s.state === SaleState.ENDED || s.state === SaleState.SOLD_OUT) return;
      const after = s.pollAfter ? Number(s.pollAfter.seconds) * 1000 + s.pollAfter.nanos / 1e6 : 2000;
      timer = setTimeout(() => poll(s.token), Math.min(Math.max(after, 500), 10_000));
    };
    const poll = (token: string) =>
      api.waitingRoom
        .getStatus({ token })
        .then(step)
        .catch((e) => {
          setErr(e);
          timer = setTimeout(() => poll(token), 3000);
        });
    api.waitingRoom
      .join({ showId })
      .then((r) => step(r as unknown as GetStatusResponse))
      .catch(setErr);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [showId]);

  const opens = tsDate(st?.opensAt);
  const etaMin = st?.estimatedWait ? Math.max(1, Math.ceil(Number(st.estimatedWait.seconds) / 60)) : 0;
  return (
    <>
      <h1 tabIndex={-1}>{t.waitTitle}</h1>
      <ErrorNote err={err} />
      <div class="wait" role="status" aria-live="polite" id="wait">
        {!st ? (
          <p>{t.loading}</p>
        ) : st.admitted ? (
          <p class="big ok" id="you-are-in">
            {t.youAreIn}
          </p>
        ) : st.soldOut || st.state === SaleState.SOLD_OUT ? (
          <p class="big bad">{t.soldOut}</p>
        ) : st.state === SaleState.ENDED ? (
          <p class="big bad">{t.saleEnded}</p>
        ) : (
          <>
            {st.state === SaleState.SCHEDULED && opens && <p>{t.waitOpens(clock(opens, lang))}</p>}
            {st.state === SaleState.PAUSED && <p>{t.waitPaused}</p>}
            {st.place > 0n && <p class="big" id="place">{t.waitPlace(digits(st.place, lang))}</p>}
            {etaMin > 0 && <p>{t.waitEta(digits(etaMin, lang))}</p>}
            <p class="note">{t.waitKeep}</p>
          </>
        )}
      </div>
    </>
  );
}
