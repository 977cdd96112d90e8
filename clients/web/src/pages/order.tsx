// An order: what is being bought (the show: its route or venue, operator
// and time, from GetShow, as the order names only its id; the seats), the
// time left to pay, how to pay (the sandbox's test tokens in dev only, or
// the gateway's approval page by redirect, which comes back here), then
// the confirmation; a guest's says the ticket number and the number the
// tickets went to. The booking's SMS links here (decision 0437): to a
// visitor not signed in, or whose order it is not (said so), the page is
// "find tickets" with the ticket number filled in (pages/find.tsx, lazy).
import { useEffect, useState } from "preact/hooks";
import { Code, ConnectError, OrderStatus, PaymentState, ticketNumber } from "@seatghor/client";
import type { Order, Payment, Show } from "@seatghor/client";

import { ErrorNote, NeedsNetwork, Lazy, Link, findPage, useApp } from "../app.js";
import { digits, mmss, operatorName, showTime, taka, tsDate, route, showName } from "../i18n.js";
import { isGuest } from "../session.js";

const POLL_MS = 1000;

export function OrderPage(props: { orderId: string }) {
  const { session } = useApp();
  return (
    <>
      <NeedsNetwork />
      {session ? <OrderInner orderId={props.orderId} /> : <Lazy load={findPage} orderId={props.orderId} />}
    </>
  );
}

/** Whether GetOrder's refusal means the order is not the caller's to read (someone else's, or no session that works). */
function notTheirs(e: unknown): boolean {
  return e instanceof ConnectError && [Code.NotFound, Code.Unauthenticated, Code.PermissionDenied].includes(e.code);
}

function OrderInner({ orderId }: { orderId: string }) {
  const { t, api, lang, config, session } = useApp();
  // GetOrder's refusal of an order that is not the caller's: said, and
  // the page finds it by ticket number instead.
  const [notMine, setNotMine] = useState<unknown>();
  const [order, setOrder] = useState<Order>();
  const [show, setShow] = useState<Show>();
  const [payment, setPayment] = useState<Payment>();
  // Back from the gateway's page (it adds charge_id): follow the payment.
  const [paying, setPaying] = useState(new URLSearchParams(location.search).has("charge_id"));
  const [err, setErr] = useState<unknown>();
  const [now, setNow] = useState(Date.now());

  const load = () =>
    api.orders
      .getOrder({ orderId })
      .then((r) => {
        setOrder(r.order);
        return r.order;
      })
      .catch((e) => {
        setErr(e);
        return undefined;
      });

  useEffect(() => {
    void api.orders
      .getOrder({ orderId })
      .then((r) => {
        setOrder(r.order);
        return api.catalog.getShow({ showId: r.order!.showId }).then((g) => setShow(g.show));
      }, (e) => (notTheirs(e) ? setNotMine(e) : setErr(e)))
      .catch(setErr);
    const tick = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(tick);
  }, [orderId]);

  // While a payment is under way (or the buyer is back from the gateway's
  // page), follow the order and the payment until they settle.
  const pending = order?.status === OrderStatus.PENDING_PAYMENT && (paying || !!order.paymentId);
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(async () => {
      const o = await load();
      const id = payment?.paymentId || o?.paymentId;
      if (!id) return;
      try {
        const p = (await api.payments.getPayment({ paymentId: id })).payment;
        setPayment(p);
        if (p && p.status === PaymentState.FAILED) setPaying(false);
      } catch {
        // the next poll tries again
      }
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [pending, payment?.paymentId]);

  async function pay(token: string | undefined) {
    setErr(undefined);
    setPaying(true);
    try {
      const r = await api.payments.startPayment(
        token ? { orderId, sandbox: { token } } : { orderId, returnUrl: `${location.origin}/order/${orderId}` },
      );
      setPayment(r.payment);
      if (!token && r.payment?.redirectUrl) location.assign(r.payment.redirectUrl);
    } catch (e) {
      setErr(e);
      setPaying(false);
    }
  }

  if (notMine) {
    return (
      <>
        <ErrorNote err={notMine} />
        <Lazy load={findPage} orderId={orderId} />
      </>
    );
  }
  if (!order || (!show && !err)) {
    return (
      <>
        <ErrorNote err={err} />
        {!err && <p>{t.loading}</p>}
      </>
    );
  }
  const payBy = tsDate(order.payBy);
  const failed = payment?.status === PaymentState.FAILED;
  return (
    <>
      {/* The show, not the order's id, is what the buyer knows. */}
      <h1 tabIndex={-1}>{show ? showName(show.title, show, lang) : t.order}</h1>
      {show && (
        <p class="meta" id="order-show">
          {route(show, lang)}
          {show.operator && ` · ${operatorName(show, lang)}`} · {showTime(show.startsAtLocal, tsDate(show.startsAt), lang)}
        </p>
      )}
      <p class="ref">
        <small>
          {t.order} <span class="id" translate={false}>{order.orderId}</span>
        </small>
      </p>
      <table class="lines">
        <tbody>
          {order.lines.map((l, i) => (
            <tr key={i}>
              <th scope="row">
                {l.seat ? `${t.seat} ${l.seat}` : `${l.gaArea} × ${digits(l.quantity, lang)}`}
                {l.seat && order.passengers.find((p) => p.seat === l.seat) && (
                  <span class="passenger-name"> · {order.passengers.find((p) => p.seat === l.seat)!.name}</span>
                )}
              </th>
              <td>{l.amount && taka(l.amount.amountMinor, lang)}</td>
            </tr>
          ))}
          <tr class="sum">
            <th scope="row">{t.total}</th>
            <td id="order-total">{order.total && taka(order.total.amountMinor, lang)}</td>
          </tr>
        </tbody>
      </table>
      <ErrorNote err={err} />
      <div role="status" aria-live="polite" id="order-status">
        {order.status === OrderStatus.CONFIRMED ? (
          <div class="done">
            <p class="big ok" id="paid">
              ✓ {t.paid}
            </p>
            {isGuest(session) && (
              <>
                <p id="ticket-number">
                  {t.ticketNumber}: <strong class="id" translate={false}>{ticketNumber(order.orderId)}</strong>
                  {order.contact?.phone && ` · ${digits(order.contact.phone, lang)}`}
                </p>
                <p class="note">{t.contactNote}</p>
              </>
            )}
            <p>
              <Link href="/tickets" class="button primary">
                {t.seeTickets}
              </Link>
            </p>
          </div>
        ) : order.status === OrderStatus.EXPIRED ? (
          <p class="big bad">{t.orderExpired}</p>
        ) : order.status === OrderStatus.CANCELLED ? (
          <p class="big bad">{t.orderCancelled}</p>
        ) : order.status === OrderStatus.REFUNDED ? (
          <p class="big bad">{t.orderRefunded}</p>
        ) : paying && !failed ? (
          <p>{t.paying}</p>
        ) : (
          failed && <p class="note error">{t.paymentFailed(t.paymentFailure(payment!.failureReason))}</p>
        )}
      </div>
      {order.status === OrderStatus.PENDING_PAYMENT && (!paying || failed) && (
        <section class="pay">
          {payBy && (
            <p>
              {t.payBy} <strong role="timer">{mmss((payBy.getTime() - now) / 1000, lang)}</strong>
            </p>
          )}
          {config.testPayments && (
            <>
              <p class="note dev">{t.testPaymentsNote}</p>
              <button type="button" class="primary" id="pay-success" onClick={() => void pay("tok_success")}>
                {t.payTest}
              </button>{" "}
              <button type="button" id="pay-decline" onClick={() => void pay("tok_decline")}>
                {t.payDecline}
              </button>{" "}
            </>
          )}
          <button type="button" id="pay-redirect" onClick={() => void pay(undefined)}>
            {t.payRedirect}
          </button>
        </section>
      )}
    </>
  );
}
