// A show's allocations in the console (decision 0457): seats ring-fenced
// for a partner (AllocationService, decision 0185) listed with what is
// left of each, made by seat ids, or as a number of places of a
// general-admission area (decision 0467), and a return time, and given
// back early, by the show's managers and admins, as the API allows them.
import { useEffect, useState } from "preact/hooks";
import { AllocationService, AllocationStatus } from "@seatghor/client";
import type { Allocation, createServiceClient } from "@seatghor/client";

import { digits, showTime, tsDate } from "../i18n.js";
import type { Lang } from "../i18n.js";
import { sayError } from "../say.js";
import { dhakaTimestamp } from "./dhaka.js";

type Allocations = ReturnType<typeof createServiceClient<typeof AllocationService>>;

const WORDS = {
  en: {
    of: "Allocations of", none: "No allocations.", partner: "Partner id", seats: "Seats", left: "Left", returns: "Returns to sale",
    status: "Status", statuses: ["", "active", "given back", "returned to sale"], release: "Give back now",
    make: "Allocate", seatIds: "Seat ids (e.g. A1 A2 A3)", returnAt: "Return what is left at (Bangladesh time)",
    generalSale: "The partner may also sell from general sale", close: "Close", places: "places",
    what: "Allocate", bySeat: "seats by id", area: "Area", quantity: "Places",
  },
  bn: {
    of: "বরাদ্দ:", none: "কোনো বরাদ্দ নেই।", partner: "পার্টনার আইডি", seats: "আসন", left: "বাকি", returns: "বিক্রিতে ফেরে",
    status: "অবস্থা", statuses: ["", "চালু", "ফেরত দেওয়া", "বিক্রিতে ফিরেছে"], release: "এখনই ফেরত দিন",
    make: "বরাদ্দ দিন", seatIds: "আসন আইডি (যেমন A1 A2 A3)", returnAt: "বাকিগুলো যখন ফেরত যাবে (বাংলাদেশ সময়)",
    generalSale: "পার্টনার সাধারণ বিক্রি থেকেও বেচতে পারবে", close: "বন্ধ", places: "জায়গা",
    what: "বরাদ্দ", bySeat: "আসন আইডি ধরে", area: "এলাকা", quantity: "জায়গার সংখ্যা",
  },
} as const;

export function ShowAllocations(props: { lang: Lang; api: Allocations; show: bigint; title: string;
  /** The show's general-admission areas: places of one are allocated by number. */
  areas: readonly string[]; onClose: () => void; onError: (s: string) => void }) {
  const { lang, api, show, onError } = props;
  const w = WORDS[lang];
  const [list, setList] = useState<Allocation[]>();
  // area "": seats by id; else a number of that area's places.
  const [f, setF] = useState({ partner: "", seats: "", area: "", quantity: "", returnAt: "", generalSale: false });
  const load = () => api.listAllocations({ showId: show }).then((r) => setList(r.allocations), (e) => onError(sayError(e, lang)));
  useEffect(() => void load(), []);
  const run = async (call: () => Promise<unknown>) => {
    onError("");
    try {
      await call();
      await load();
    } catch (err) {
      onError(sayError(err, lang));
    }
  };
  const make = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const what = f.area ? { gaArea: f.area, quantity: Number(f.quantity) } : { seats: f.seats.toUpperCase().split(/[\s,]+/).filter(Boolean) };
      await api.allocateSeats({ showId: show, partnerId: BigInt(f.partner), ...what,
        returnAt: dhakaTimestamp(f.returnAt), generalSale: f.generalSale });
      setF({ ...f, seats: "", quantity: "" });
    });
  };
  const field = (k: "partner" | "seats" | "area" | "quantity" | "returnAt") => (e: Event) =>
    setF({ ...f, [k]: (e.target as HTMLInputElement | HTMLSelectElement).value });
  return (
    <section class="console-sales" id="console-allocations" aria-labelledby="allocations-title">
      <h2 id="allocations-title">{w.of} {props.title}</h2>
      <button type="button" id="allocations-close" onClick={props.onClose}>{w.close}</button>
      {list?.length === 0 && <p class="note" id="allocations-none">{w.none}</p>}
      {list && list.length > 0 && (
        <table class="console-table" id="allocations">
          <thead><tr><th scope="col">{w.partner}</th><th scope="col">{w.seats}</th><th scope="col">{w.left}</th>
            <th scope="col">{w.returns}</th><th scope="col">{w.status}</th><th scope="col" /></tr></thead>
          <tbody>
            {list.map((a) => (
              <tr key={a.allocationId} id={`allocation-${a.allocationId}`}>
                <th scope="row">{digits(String(a.partnerId), lang)}</th>
                <td>{a.seats.length > 0 ? a.seats.join(" ") : `${digits(a.quantity, lang)} ${w.places}`}</td>
                <td class="left">{digits(a.available, lang)}</td>
                <td>{showTime(undefined, tsDate(a.returnAt), lang)}</td>
                <td class="status">{w.statuses[a.status] ?? ""}</td>
                <td>{a.status === AllocationStatus.ACTIVE && (
                  <button type="button" class="danger" id={`release-${a.allocationId}`}
                    onClick={() => void run(() => api.releaseAllocation({ allocationId: a.allocationId }))}>{w.release}</button>
                )}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={make} style="display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:0 .75em;align-items:end">
        <label>{w.partner} <input id="alloc-partner" inputMode="numeric" pattern="[0-9]+" required value={f.partner} onInput={field("partner")} /></label>{" "}
        {props.areas.length > 0 && (
          <label>{w.what}{" "}
            <select id="alloc-area" value={f.area} onChange={field("area")}>
              <option value="">{w.bySeat}</option>
              {props.areas.map((a) => <option key={a} value={a}>{w.area}: {a}</option>)}
            </select>
          </label>
        )}{" "}
        {f.area
          ? <label>{w.quantity} <input id="alloc-quantity" type="number" min={1} max={100000} required value={f.quantity} onInput={field("quantity")} /></label>
          : <label>{w.seatIds} <input id="alloc-seats" required value={f.seats} onInput={field("seats")} /></label>}{" "}
        <label>{w.returnAt} <input id="alloc-return" type="datetime-local" required value={f.returnAt} onInput={field("returnAt")} /></label>{" "}
        <label style="display:flex;flex-direction:row;gap:.5em;align-items:center"><input id="alloc-general" type="checkbox" style="width:auto" checked={f.generalSale}
          onChange={(e) => setF({ ...f, generalSale: (e.target as HTMLInputElement).checked })} /> {w.generalSale}</label>{" "}
        <button type="submit" id="alloc-make">{w.make}</button>
      </form>
    </section>
  );
}
