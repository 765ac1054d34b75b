// The attention explorer: tabs, the list of runs, and the four views.

import { api, clearErrorsOn, say, sayError } from "./api.js";
import { initCaption } from "./caption.js";
import { initCompare } from "./compare.js";
import { initReading } from "./reading.js";
import { initTranslate } from "./translate.js";

/** A tablist with roving focus: arrows, Home and End move and select; the hash remembers. */
function initTabs(tablist) {
  const tabs = [...tablist.querySelectorAll('[role="tab"]')];
  const select = (tab, focus = true) => {
    for (const other of tabs) {
      const chosen = other === tab;
      other.setAttribute("aria-selected", String(chosen));
      other.tabIndex = chosen ? 0 : -1;
      document.getElementById(other.getAttribute("aria-controls")).hidden = !chosen;
    }
    if (focus) tab.focus();
    history.replaceState(null, "", `#${tab.id.replace(/^tab-/, "")}`);
  };
  tablist.addEventListener("click", (event) => {
    const tab = event.target.closest('[role="tab"]');
    if (tab) select(tab);
  });
  tablist.addEventListener("keydown", (event) => {
    const shown = tabs.filter((tab) => !tab.hidden); // a tab with no run is skipped
    const at = shown.indexOf(document.activeElement);
    if (at < 0) return;
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: shown.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    select(shown[(next + shown.length) % shown.length]);
  });
  const fromHash = tabs.find((tab) => tab.id === `tab-${location.hash.slice(1)}`);
  if (fromHash) select(fromHash, false);
}

/** Hide the tabs whose list of runs is empty, and show the first one left if the chosen one
 *  went (all stay when no run is loaded at all: each says how to load one). */
function hideEmptyTabs(listed) {
  if (Object.values(listed).every((runs) => !runs.length)) return;
  for (const [name, runs] of Object.entries(listed)) {
    document.getElementById(`tab-${name}`).hidden = !runs.length;
  }
  const chosen = document.querySelector('[role="tab"][aria-selected="true"]');
  if (chosen?.hidden) document.querySelector('[role="tab"]:not([hidden])')?.click();
}

async function main() {
  initTabs(document.querySelector('[role="tablist"]'));
  const status = document.getElementById("runs-status");
  say(status, "Loading the runs…", "busy");
  let runs;
  try {
    runs = await api("/api/runs");
  } catch (error) {
    sayError(status, error);
    return;
  }
  say(status, runs.length === 1 ? "1 run loaded." : `${runs.length} runs loaded.`);
  // A tab no loaded run answers is hidden (compare needs two translation runs).
  const listed = { translate: initTranslate(runs), caption: initCaption(runs),
    read: initReading(runs) };
  initCompare(runs);
  hideEmptyTabs({ ...listed, compare: listed.translate.length > 1 ? listed.translate : [] });
  for (const tab of ["translate", "compare", "caption", "read"]) {
    clearErrorsOn(document.getElementById(`${tab}-form`), document.getElementById(`${tab}-status`));
  }
  document.body.dataset.ready = "true";
}

main();
