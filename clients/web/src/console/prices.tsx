// A show's price of each section in the console, in taka, as the new-show
// form (a chart's blocks) and the edit form (decision 0459) both take it:
// the fields, and the sections whose price was changed, as the API's
// section_prices. The edit form prices its general-admission areas with
// it too (decision 0474).
import { useState } from "preact/hooks";

import type { Lang } from "../i18n.js";

interface Priced { name: string; nameBn: string; priceMinor: bigint }

export function useSectionPrices(sections: readonly Priced[]) {
  const [prices, setPrices] = useState(() => sections.map((s) => String(Number(s.priceMinor) / 100)));
  return {
    /** The sections whose price differs from what they had, in paisa. */
    changes: () => sections.map((s, i) => ({ section: s.name, priceMinor: BigInt(Math.round(Number(prices[i]) * 100)) }))
      .filter((p, i) => p.priceMinor !== sections[i].priceMinor),
    /** One field a section, `${idPrefix}-${index}`, labelled "label <section's name>". */
    fields: (lang: Lang, label: string, idPrefix: string, onEdit?: () => void) => sections.map((s, i) => (
      <label key={s.name}>{label} {(lang === "bn" && s.nameBn) || s.name}{" "}
        <input id={`${idPrefix}-${i}`} type="number" min={0} max={10000000} step="0.01" required value={prices[i]}
          onInput={(e) => { onEdit?.(); setPrices(prices.map((p, j) => (j === i ? (e.target as HTMLInputElement).value : p))); }} /></label>
    )),
  };
}
