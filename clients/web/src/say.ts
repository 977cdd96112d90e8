// What a page says about an error (decision 0303), apart from the shell so
// that a bundle of its own (the manifest) says it the same way.
import { Code, ConnectError, asSeatghorError } from "@seatghor/client";

import { strings } from "./i18n.js";
import type { Lang } from "./i18n.js";
import { reasonsBn, reasonsEn } from "./reasons.js";

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
  const known = asSeatghorError(err);
  const said = known && (lang === "bn" ? reasonsBn : reasonsEn)[known.reason];
  if (said) return said;
  if (err instanceof ConnectError) return `${t.errorUnknown} ${t.errorCode(err.code)}`;
  // Not the API's answer: a request that did not get through (fetch
  // threw a TypeError), or the page's own failure.
  return err instanceof TypeError ? `${t.errorUnknown} ${t.errorCode(Code.Unavailable)}` : t.errorUnknown;
}

