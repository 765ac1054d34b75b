// The Compare tab: one sentence through two or more translation runs, their best hypotheses'
// heatmaps side by side, each under its run name and mechanism.

import { api, say, sayError } from "./api.js";
import { card, compareFigure } from "./compare-view.js";
import { downloadBar } from "./download.js";
import { fillLevels, levelsOf, vocabularyOf } from "./levels.js";
import { runNamed, runsAnswering } from "./runs.js";
import { TRANSLATE, numberOf } from "./translate.js";

const $ = (id) => document.getElementById(id);

/** A checkbox for one run: its name and mechanism. */
function runChoice(run, index) {
  const labelNode = document.createElement("label");
  const box = Object.assign(document.createElement("input"),
    { type: "checkbox", name: "compare-run", value: run.name, checked: index < 3 });
  const mechanism = Object.assign(document.createElement("span"),
    { className: "mechanism", textContent: run.mechanism || "" });
  labelNode.append(box, ` ${run.name} `, mechanism);
  return labelNode;
}

/** The tab: the runs to pick, the sentence, one card per run and the downloads. */
class CompareView {
  constructor(runs) {
    this.form = $("compare-form");
    this.status = $("compare-status");
    this.allRuns = runs;
    this.generation = 0;
    this.shown = null; // { text, entries: [{ run, hypothesis, figure, map }] }
    const mine = runsAnswering(runs, TRANSLATE);
    $("compare-runs").append(...mine.map(runChoice));
    if (mine.length < 2) {
      for (const control of this.form.elements) control.disabled = true;
      say(this.status, "Comparing needs two or more translation runs: start attnlab serve "
        + "with --run NAME=DIR for each.", "error");
    }
    this.updateDownloads = downloadBar($("compare-downloads"), () => this.figure(),
      (message) => say(this.status, message, "error"));
    this.showLevels();
    this.listen();
  }

  /** The levels the checked runs share by name (characters when all read characters...);
   *  "pieces" when their pieces differ. */
  showLevels() {
    const names = [...this.form.querySelectorAll('input[name="compare-run"]:checked')]
      .map((box) => box.value);
    const vocabularies = new Set(names.map((name) => vocabularyOf(runNamed(this.allRuns,
      name))));
    const levels = vocabularies.size === 1 ? levelsOf([...vocabularies][0])
      : [{ value: "piece", name: "pieces (each run's own)" }, { value: "word", name: "words" }];
    const chosen = this.form.elements["compare-level"]?.value;
    fillLevels($("compare-levels"), "compare-level", levels,
      levels.some((level) => level.value === chosen) ? chosen : undefined);
  }

  figure() {
    const drawn = this.shown?.entries.filter((entry) => entry.map) ?? [];
    return drawn.length > 0 && {
      run: drawn.map((entry) => entry.run.name).join("-vs-"),
      svg: () => compareFigure(drawn),
      data: () => ({ text: this.shown.text, runs: drawn.map((entry) => ({
        run: entry.run.name, mechanism: entry.run.mechanism, hypothesis: entry.hypothesis })) }),
    };
  }

  /** One entry per run: its best hypothesis (or why there is none) and its card. */
  entry(name, answer) {
    const run = runNamed(this.allRuns, name);
    const hypothesis = answer.value?.hypotheses?.[0] ?? null;
    const failure = answer.status === "rejected" ? answer.reason.message
      : hypothesis ? null : "No translation.";
    try {
      // the card's own object: its select redraws card.map, which the downloads read
      return Object.assign(card(run, hypothesis, failure), { run, hypothesis });
    } catch (error) {
      return Object.assign(card(run, null, error.message), { run, hypothesis });
    }
  }

  async compare() {
    const names = [...this.form.querySelectorAll('input[name="compare-run"]:checked')]
      .map((box) => box.value);
    if (names.length < 2) {
      say(this.status, "Pick at least two runs to compare.", "error");
      return;
    }
    const text = $("compare-text").value;
    const level = this.form.elements["compare-level"].value;
    const beam = numberOf($("compare-beam"));
    const ticket = ++this.generation;
    say(this.status, `Translating with ${names.length} runs…`, "busy");
    const answers = await Promise.allSettled(names.map((name) => api(TRANSLATE,
      { json: { run: name, text, beam, nbest: 1, level,
        ...(runNamed(this.allRuns, name).heads ? { heads: true } : {}) } })));
    if (ticket !== this.generation) return; // a newer comparison started meanwhile
    const failures = answers.filter((answer) => answer.status === "rejected");
    if (failures.length === answers.length) {
      this.shown = null;
      $("compare-results").replaceChildren();
      $("compare-downloads").hidden = true;
      this.updateDownloads();
      sayError(this.status, failures[0].reason);
      return;
    }
    this.shown = { text, entries: names.map((name, k) => this.entry(name, answers[k])) };
    $("compare-results").replaceChildren(...this.shown.entries.map((entry) => entry.figure));
    $("compare-downloads").hidden = false;
    this.updateDownloads();
    const failed = failures.length ? ` ${failures.length} failed: ${failures[0].reason.message}`
      : "";
    say(this.status, `Compared ${names.length} runs on the same sentence.${failed}`,
      failures.length ? "error" : "ok");
  }

  listen() {
    const compare = () => this.compare().catch((error) => sayError(this.status, error));
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      compare();
    });
    this.form.addEventListener("change", (event) => {
      if (event.target.name === "compare-run") this.showLevels();
      if (event.target.name === "compare-level" && this.shown) compare();
    });
  }
}

export function initCompare(runs) {
  return new CompareView(runs);
}
