// What a page says about an error (decision 0303), apart from the shell so
// that a bundle of its own (the manifest) says it the same way.
import { Code, ConnectError, asSeatghorError } from "@seatghor/client";

import { strings } from "./i18n.js";
import type { Lang } from "./i18n.js";
import { reasonsBn, reasonsEn } from "./reasons.js";

/** The sentences sayError knows, by language: the buyer's, and the staff's once taught. */
const known: Record<Lang, Partial<Record<string, string>>> = { en: { ...reasonsEn }, bn: { ...reasonsBn } };

/** Teaches sayError more sentences (staffreasons.ts teaches the staff's). */
export function teachReasons(en: Record<string, string>, bn: Record<string, string>): void {
  Object.assign(known.en, en);
  Object.assign(known.bn, bn);
}

/**
 * What a page says about an error, in the page's language (decision
 * 0303): the sentence of its reason (reasons.ts), else a general sentence
 * and one for its Connect code. Never the server's message: it is for
 * developers (field names, id formats, rule numbers) and in English.
 */
export function sayError(err: unknown, lang: Lang): string {
  const t = strings(lang);
  // Offline, a call that did not get through needs the network: said so
  // (decision 0399), not as a failure of the server.
  if (err instanceof ConnectError && err.code === Code.Unavailable && !navigator.onLine) return t.offlineError;
  const answer = asSeatghorError(err);
  const said = answer && known[lang][answer.reason];
  if (said) return said;
  if (err instanceof ConnectError) return `${t.errorUnknown} ${t.errorCode(err.code)}`;
  // Not the API's answer: a request that did not get through (fetch
  // threw a TypeError), or the page's own failure.
  return err instanceof TypeError ? `${t.errorUnknown} ${t.errorCode(Code.Unavailable)}` : t.errorUnknown;
}

