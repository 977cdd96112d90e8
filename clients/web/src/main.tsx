// The site's entry point: pick up a token the sign-in left in the
// fragment, read the sign-in configuration, draw the app.
import { render } from "preact";

import { Root } from "./app.js";
import { loadConfig, takeTokenFromFragment } from "./session.js";
import { PATTERNS } from "./seatmap.js";

takeTokenFromFragment();
// A fragment may also come without a page load (a link to the page shown):
// the same rules, and a token taken starts the page again signed in.
addEventListener("hashchange", () => {
  if (takeTokenFromFragment()) location.reload();
});
// The service worker (sw.ts: the shell and "my tickets" offline) is
// registered once the page has loaded, so that it takes nothing from the
// first load: its install fetches the shell again only to revalidate it.
if ("serviceWorker" in navigator) {
  const register = () => void navigator.serviceWorker.register("/sw.js").catch(() => undefined);
  if (document.readyState === "complete") register();
  else addEventListener("load", register);
}
void loadConfig().then((config) => {
  document.body.insertAdjacentHTML("afterbegin", PATTERNS);
  const root = document.getElementById("app")!;
  root.textContent = ""; // the "loading" line of index.html
  render(<Root config={config} />, root);
});
