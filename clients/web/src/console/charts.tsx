// The console's seat charts (decision 0456): a manager designs a venue's
// chart as blocks of straight or curved rows with aisles, wheelchair places
// and a price a block, sees it drawn as she types, saves it as a layout
// template of the organisation (CreateLayoutTemplate), edits a chart she
// drew later (UpdateLayoutTemplate, decision 0466: the shows made on it
// keep theirs), and makes shows on it as drafts (CreateShow with draft),
// which the shows tab publishes.
import { useEffect, useState } from "preact/hooks";
import { CatalogService, ShowKind } from "@seatghor/client";
import type { LayoutTemplate, createServiceClient } from "@seatghor/client";

import { digits } from "../i18n.js";
import type { Lang } from "../i18n.js";
import { sayError } from "../say.js";
import { dhakaTimestamp } from "./dhaka.js";
import { useSectionPrices } from "./prices.js";
import { blocksOf, chartOf, KIND_WHEELCHAIR, PLACE } from "./chart.js";
import type { Block, Chart } from "./chart.js";

type Catalog = ReturnType<typeof createServiceClient<typeof CatalogService>>;

const WORDS = {
  en: {
    charts: "Seat charts", chart: "Chart", noCharts: "No charts yet: design one below.", blocks: "Blocks", seats: "Seats",
    design: "Design a chart", chartId: "Chart id (a-z, 0-9, -)", name: "Name", nameBn: "Name in Bengali",
    block: "Block", rows: "Rows", perRow: "Seats a row", price: "Price of a seat (taka)", bend: "Curve (0 straight)",
    aisle: "Aisle after seat (0 none)", wheelchair: "Wheelchair places (front row)", addBlock: "Add a block",
    removeBlock: "Remove this block", save: "Save the chart", saved: "Chart saved:", preview: "Preview",
    drawn: (seats: number, blocks: number, wheelchair: number) =>
      `${seats} seats in ${blocks} block${blocks === 1 ? "" : "s"}, ${wheelchair} wheelchair place${wheelchair === 1 ? "" : "s"}`,
    stage: "Stage", newShow: "New show on this chart", newShowOf: "New show on", title: "Title", titleBn: "Title in Bengali",
    venue: "Venue", venueBn: "Venue in Bengali", starts: "Starts (Bangladesh time)", opens: "Sale opens (Bangladesh time; empty: when published)",
    createDraft: "Create as a draft", drafted: "Draft created: publish it from the shows tab when it is ready.", close: "Close",
    shipped: "shipped", priceOf: "Price of a seat (taka) in", edit: "Edit", editing: "Edit the chart",
    newChart: "Design a new chart instead", kept: "Shows already made on it keep their seats; new shows take the changes.",
  },
  bn: {
    charts: "আসন-নকশা", chart: "নকশা", noCharts: "এখনও কোনো নকশা নেই: নিচে একটি আঁকুন।", blocks: "ব্লক", seats: "আসন",
    design: "নকশা আঁকুন", chartId: "নকশার আইডি (a-z, 0-9, -)", name: "নাম", nameBn: "বাংলায় নাম",
    block: "ব্লক", rows: "সারি", perRow: "সারিতে আসন", price: "প্রতি আসনের দাম (টাকা)", bend: "বাঁক (০ সোজা)",
    aisle: "যে আসনের পরে চলার পথ (০ নেই)", wheelchair: "হুইলচেয়ারের জায়গা (সামনের সারি)", addBlock: "ব্লক যোগ করুন",
    removeBlock: "এই ব্লক বাদ দিন", save: "নকশা রাখুন", saved: "নকশা রাখা হয়েছে:", preview: "যেমন দেখাবে",
    drawn: (seats: number, blocks: number, wheelchair: number) =>
      `${digits(String(blocks), "bn")}টি ব্লকে ${digits(String(seats), "bn")}টি আসন, হুইলচেয়ারের জায়গা ${digits(String(wheelchair), "bn")}টি`,
    stage: "মঞ্চ", newShow: "এই নকশায় নতুন শো", newShowOf: "নতুন শো:", title: "শিরোনাম", titleBn: "বাংলায় শিরোনাম",
    venue: "ভেন্যু", venueBn: "বাংলায় ভেন্যু", starts: "শুরু (বাংলাদেশ সময়)", opens: "বিক্রি শুরু (বাংলাদেশ সময়; খালি: প্রকাশের সময়)",
    createDraft: "খসড়া হিসেবে তৈরি করুন", drafted: "খসড়া তৈরি হয়েছে: তৈরি হলে শো-তালিকা থেকে প্রকাশ করুন।", close: "বন্ধ",
    shipped: "সঙ্গে দেওয়া", priceOf: "প্রতি আসনের দাম (টাকা):", edit: "বদলান", editing: "নকশা বদলান",
    newChart: "বরং নতুন নকশা আঁকুন", kept: "এই নকশায় আগে তৈরি শোগুলোর আসন যেমন আছে থাকবে; নতুন শোতে বদলগুলো আসবে।",
  },
} as const;

const NEW_BLOCK: Block = { name: "", nameBn: "", rows: 5, seatsPerRow: 10, priceTaka: 500, bend: 0, aisleAfter: 0, wheelchair: 0 };

function seatsOf(t: LayoutTemplate): number {
  return t.layout?.sections.reduce((n, s) => n + s.rows.reduce((m, r) => m + r.seats.length, 0), 0) ?? 0;
}

/** The organisation's charts, the designer, and a new draft show on a chart. */
export function Charts(props: { lang: Lang; catalog: Catalog; org: string; onError: (s: string) => void }) {
  const { lang, catalog, org, onError } = props;
  const w = WORDS[lang];
  const [charts, setCharts] = useState<LayoutTemplate[]>();
  const [using, setUsing] = useState<LayoutTemplate>();
  const [editing, setEditing] = useState<{ chart: LayoutTemplate; blocks: Block[] }>();
  const load = () => catalog.listLayoutTemplates({ organizationId: org }).then((r) => setCharts(r.templates),
    (e) => onError(sayError(e, lang)));
  useEffect(() => void load(), []);
  const named = (t: LayoutTemplate) => (lang === "bn" && t.nameBn) || t.name;
  return (
    <section id="console-charts" aria-labelledby="charts-heading">
      <h2 id="charts-heading">{w.charts}</h2>
      {charts && charts.length === 0 && <p class="note">{w.noCharts}</p>}
      {charts && charts.length > 0 && (
        <table class="console-table" id="charts-table">
          <thead><tr><th scope="col">{w.chart}</th><th scope="col">{w.blocks}</th><th scope="col">{w.seats}</th><th scope="col" /></tr></thead>
          <tbody>
            {charts.map((t) => (
              <tr key={`${t.organizationId}/${t.templateId}`} id={`chart-${t.templateId}`}>
                <th scope="row">{named(t)} <small>({t.organizationId ? t.templateId : w.shipped})</small></th>
                <td>{digits(String(t.layout?.sections.length ?? 0), lang)}</td>
                <td>{digits(String(seatsOf(t)), lang)}</td>
                <td><button type="button" id={`use-${t.templateId}`} onClick={() => setUsing(t)}>{w.newShow}</button>
                  {editable(t) && <>{" · "}<button type="button" id={`edit-chart-${t.templateId}`}
                    onClick={() => setEditing({ chart: t, blocks: editable(t)! })}>{w.edit}</button></>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {using && <NewShow key={using.templateId} lang={lang} catalog={catalog} org={org} chart={using}
        onClose={() => setUsing(undefined)} onError={onError} />}
      <Designer key={editing?.chart.templateId ?? ""} lang={lang} catalog={catalog} org={org} editing={editing}
        onNew={() => setEditing(undefined)} onSaved={() => void load()} onError={onError} />
    </section>
  );
}

/** The blocks of an organisation's chart the designer drew, to edit it; undefined for another. */
function editable(t: LayoutTemplate): Block[] | undefined {
  return t.organizationId && t.layout ? blocksOf(t.layout.sections) : undefined;
}

/**
 * The designer: a new chart, or (editing) one of the organisation's
 * charts it drew, read back as its blocks and saved again under its id
 * (UpdateLayoutTemplate, decision 0466).
 */
function Designer(props: { lang: Lang; catalog: Catalog; org: string; editing?: { chart: LayoutTemplate; blocks: Block[] };
  onNew: () => void; onSaved: () => void; onError: (s: string) => void }) {
  const { lang, editing } = props;
  const w = WORDS[lang];
  const [id, setId] = useState(editing?.chart.templateId ?? "");
  const [name, setName] = useState(editing?.chart.name ?? "");
  const [nameBn, setNameBn] = useState(editing?.chart.nameBn ?? "");
  const [blocks, setBlocks] = useState<Block[]>(editing?.blocks ?? [{ ...NEW_BLOCK, name: "Main", nameBn: "মূল" }]);
  const [saved, setSaved] = useState("");
  const chart = chartOf(blocks);
  const set = (i: number, k: keyof Block) => (e: Event) => {
    const v = (e.target as HTMLInputElement).value;
    setSaved("");
    setBlocks(blocks.map((b, j) => (j !== i ? b : { ...b, [k]: k === "name" || k === "nameBn" ? v : Math.max(0, Number(v) || 0) })));
  };
  const save = async (e: Event) => {
    e.preventDefault();
    props.onError("");
    try {
      const template = {
        templateId: id.trim(), organizationId: props.org, name: name.trim(), nameBn: nameBn.trim(),
        layout: {
          decks: [{ width: chart.width, height: chart.height }],
          sections: chart.sections.map((s) => ({ name: s.name, nameBn: s.nameBn, priceMinor: s.priceMinor,
            rows: s.rows.map((r) => ({ label: r.label, seats: r.seats })) })),
          features: chart.features,
        },
      };
      const r = editing ? await props.catalog.updateLayoutTemplate({ template }) : await props.catalog.createLayoutTemplate({ template });
      setSaved(r.template?.templateId ?? id);
      props.onSaved();
    } catch (err) {
      props.onError(sayError(err, lang));
    }
  };
  const num = (i: number, k: keyof Block, label: string, max: number) => (
    <label>{label} <input id={`block-${i}-${k}`} type="number" min={0} max={max} required value={blocks[i][k]} onInput={set(i, k)} /></label>
  );
  return (
    <form id="chart-form" onSubmit={save} aria-labelledby="design-heading">
      <h3 id="design-heading">{editing ? `${w.editing}: ${id}` : w.design}</h3>
      {editing && <p class="note" id="chart-kept">{w.kept} <button type="button" id="chart-new" onClick={props.onNew}>{w.newChart}</button></p>}
      <label>{w.chartId} <input id="chart-id" required pattern="[a-z0-9][a-z0-9\-]{0,63}" value={id} readOnly={!!editing}
        onInput={(e) => setId((e.target as HTMLInputElement).value)} /></label>{" "}
      <label>{w.name} <input id="chart-name" required maxLength={100} value={name}
        onInput={(e) => setName((e.target as HTMLInputElement).value)} /></label>{" "}
      <label>{w.nameBn} <input id="chart-name-bn" lang="bn" maxLength={100} value={nameBn}
        onInput={(e) => setNameBn((e.target as HTMLInputElement).value)} /></label>
      {blocks.map((b, i) => (
        <fieldset key={i} id={`block-${i}`} style="margin:.5em 0;display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:0 .75em">
          <legend>{w.block} {digits(String(i + 1), lang)}</legend>
          <label>{w.name} <input id={`block-${i}-name`} required maxLength={64} value={b.name} onInput={set(i, "name")} /></label>{" "}
          <label>{w.nameBn} <input id={`block-${i}-nameBn`} lang="bn" maxLength={64} value={b.nameBn} onInput={set(i, "nameBn")} /></label>{" "}
          {num(i, "rows", w.rows, 200)} {num(i, "seatsPerRow", w.perRow, 500)} {num(i, "priceTaka", w.price, 10000000)}{" "}
          {num(i, "bend", w.bend, 50)} {num(i, "aisleAfter", w.aisle, 500)} {num(i, "wheelchair", w.wheelchair, 500)}
          {blocks.length > 1 && <button type="button" id={`block-${i}-remove`}
            onClick={() => setBlocks(blocks.filter((_, j) => j !== i))}>{w.removeBlock}</button>}
        </fieldset>
      ))}
      <button type="button" id="block-add" onClick={() => setBlocks([...blocks, { ...NEW_BLOCK }])}>{w.addBlock}</button>{" "}
      <button type="submit" id="chart-save">{w.save}</button>
      {saved && <span role="status" id="chart-saved"> {w.saved} {saved}</span>}
      <Preview chart={chart} lang={lang} />
    </form>
  );
}

/** The chart drawn as it will be saved: the stage, each seat, wheelchair places square. */
function Preview({ chart, lang }: { chart: Chart; lang: Lang }) {
  const w = WORDS[lang];
  const seats = chart.sections.flatMap((s) => s.rows.flatMap((r) => r.seats));
  const wheelchair = seats.filter((s) => s.kind === KIND_WHEELCHAIR).length;
  const summary = w.drawn(seats.length, chart.sections.length, wheelchair);
  const r = PLACE * 0.4;
  return (
    <figure style="margin:1em 0">
      <figcaption id="chart-summary">{w.preview}: {summary}</figcaption>
      <svg id="chart-preview" role="img" aria-label={summary} viewBox={`0 0 ${chart.width} ${chart.height}`}
        style="width:100%;max-width:48rem;max-height:24rem;background:#fafafa;border:1px solid #ddd">
        {chart.features.map((f, i) => (
          <g key={i}>
            <rect x={f.x - f.width / 2} y={f.y - f.height / 2} width={f.width} height={f.height} fill="#444" rx={2} />
            <text x={f.x} y={f.y + 2} font-size={6} fill="#fff" text-anchor="middle">{w.stage}</text>
          </g>
        ))}
        {seats.map((s) => s.kind === KIND_WHEELCHAIR
          ? <rect key={s.seat} data-seat={s.seat} class="wheelchair" x={s.x - r} y={s.y - r} width={2 * r} height={2 * r} fill="#1565c0" />
          : <circle key={s.seat} data-seat={s.seat} cx={s.x} cy={s.y} r={r} fill="#2e7d32" />)}
      </svg>
    </figure>
  );
}

function NewShow(props: { lang: Lang; catalog: Catalog; org: string; chart: LayoutTemplate; onClose: () => void; onError: (s: string) => void }) {
  const { lang, chart } = props;
  const w = WORDS[lang];
  const [f, setF] = useState({ title: "", titleBn: "", venue: "", venueBn: "", starts: "", opens: "" });
  // This show's price of each of the chart's blocks, in taka: the chart's
  // to begin with.
  const prices = useSectionPrices(chart.layout?.sections ?? []);
  const [done, setDone] = useState(false);
  const field = (k: keyof typeof f) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const create = async (e: Event) => {
    e.preventDefault();
    props.onError("");
    try {
      await props.catalog.createShow({
        kind: ShowKind.CONCERT, organizationId: props.org, draft: true, currency: "BDT",
        title: f.title.trim(), titleBn: f.titleBn.trim(), venue: f.venue.trim(), venueBn: f.venueBn.trim(),
        startsAt: dhakaTimestamp(f.starts), ...(f.opens && { onSaleAt: dhakaTimestamp(f.opens) }),
        layoutTemplateId: chart.templateId, maxSeatsPerAccount: 10, maxSeatsPerHold: 10,
        sectionPrices: prices.changes(),
      });
      setDone(true);
    } catch (err) {
      props.onError(sayError(err, lang));
    }
  };
  const input = (k: keyof typeof f, label: string, attrs: Record<string, unknown> = {}) => (
    <label>{label} <input id={`new-${k}`} value={f[k]} onInput={field(k)} {...attrs} /></label>
  );
  return (
    <form id="new-show" onSubmit={create} aria-labelledby="new-show-heading">
      <h3 id="new-show-heading">{w.newShowOf} {(lang === "bn" && chart.nameBn) || chart.name}</h3>
      {input("title", w.title, { required: true, maxLength: 200 })} {input("titleBn", w.titleBn, { maxLength: 200, lang: "bn" })}{" "}
      {input("venue", w.venue, { maxLength: 200 })} {input("venueBn", w.venueBn, { maxLength: 200, lang: "bn" })}{" "}
      {input("starts", w.starts, { type: "datetime-local", required: true })} {input("opens", w.opens, { type: "datetime-local" })}{" "}
      {prices.fields(lang, w.priceOf, "new-price")}{" "}
      <button type="submit" id="new-create">{w.createDraft}</button>{" "}
      <button type="button" id="new-close" onClick={props.onClose}>{w.close}</button>
      {done && <p role="status" id="new-drafted">{w.drafted}</p>}
    </form>
  );
}
