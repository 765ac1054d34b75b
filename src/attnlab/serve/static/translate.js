// The Translate tab: a sentence in, the n-best list out, and for the chosen hypothesis its
// attention heatmap with a step slider (translation-view.js draws them, as in a notebook).
// The label levels are the run's own (levels.js): characters first for a character model. At
// the model's own pieces the heatmap's switch shows the attributions of the same output,
// asked of POST /api/explain when chosen (each costs a few to a few dozen translations).
// A run with heads (GET /api/runs says [layers, heads]) answers with every layer and head of
// its cross-attention, and the heatmap offers a layer and head and the grid of them all.

import { latest, say, sayError } from "./api.js";
import { fillLevels, levelsOf, vocabularyOf } from "./levels.js";
import { describeChoice, pickRuns, runNamed, titleOf } from "./runs.js";
import { TranslationResults } from "./translation-view.js";

const $ = (id) => document.getElementById(id);
/** The route this tab (and the compare tab) posts to; they list the runs that answer it. */
export const TRANSLATE = "/api/translate";

/** A number input's value, or undefined when empty (the server then uses its default). */
export function numberOf(input) {
  return input.value.trim() === "" ? undefined : Number(input.value);
}

/** The level toggle of the runs chosen in `select`: their levels, the first checked. */
export function levelToggle(fieldset, name, runs, select) {
  const fill = () => fillLevels(fieldset, name,
    levelsOf(vocabularyOf(runNamed(runs, select.value))));
  select.addEventListener("change", fill);
  fill();
}

// The server's default --max-beam (attnlab.serve.Limits); a run listed with its own max_beam
// lowers the beam and n-best boxes to it, so the form allows only what the server accepts.
const MAX_BEAM = 16;

/** Cap the beam (and n-best) boxes at the chosen run's max_beam. */
function capBeam(runs, select, inputs) {
  const cap = () => {
    const limit = runNamed(runs, select.value).max_beam ?? MAX_BEAM;
    for (const input of inputs) {
      input.max = String(limit);
      if (Number(input.value) > limit) input.value = String(limit);
    }
  };
  select.addEventListener("change", cap);
  cap();
}

/** The tab: its form and the results. */
class TranslateView {
  constructor(runs) {
    this.form = $("translate-form");
    this.status = $("translate-status");
    this.request = latest();
    this.explainRequest = latest(); // its own: an explanation never aborts a translation
    this.runs = pickRuns($("translate-run"), runs, TRANSLATE, "translation", this.status);
    describeChoice($("translate-run"), this.runs, $("translate-about"));
    levelToggle($("translate-levels"), "level", this.runs, $("translate-run"));
    capBeam(this.runs, $("translate-run"), [$("translate-beam"), $("translate-nbest")]);
    this.results = new TranslationResults($("translate-results"), "translate",
      (message, kind) => say(this.status, message, kind));
    this.listen();
    this.openWithExample();
  }

  /** An empty page says nothing: open with the first run's example sentence, translated. */
  openWithExample() {
    const example = runNamed(this.runs, $("translate-run").value).example;
    if (!example || $("translate-text").value) return;
    $("translate-text").value = example;
    this.translate();
  }

  show(answer, run, level, text) {
    const hypotheses = answer.hypotheses ?? [];
    if (!hypotheses.length) {
      this.results.clear();
      say(this.status, "The model wrote no translation for this sentence.", "error");
      return;
    }
    const count = hypotheses.length === 1 ? "1 hypothesis" : `${hypotheses.length} hypotheses`;
    say(this.status, `${count} from ${run.name}.`);
    const levels = levelsOf(vocabularyOf(run));
    const levelName = levels.find((l) => l.value === level)?.name ?? level;
    this.results.show({ name: run.name, title: `${titleOf(run)} · ${levelName}`, hypotheses,
      data: (hypothesis) => ({ run: run.name, mechanism: run.mechanism, level, text,
        hypothesis }), ...this.explaining(run, level, text) });
  }

  /** The switch's attributions for run's translations of text at level: asked of the
   *  server for the chosen hypothesis at the model's own pieces (the level the attributions
   *  are computed at), else a sentence saying where to find them. */
  explaining(run, level, text) {
    const views = run.explains ?? [];
    if (!views.length) return {};
    const pieces = levelsOf(vocabularyOf(run))[0];
    if (level !== pieces.value) {
      return { unavailable: `The attributions are over the model's own pieces: choose `
        + `Labels: ${pieces.name} to see them.` };
    }
    const explain = (hypothesis, index, view) => this.explainRequest("/api/explain", {
      json: { run: run.name, text, target: hypothesis.text, methods: [view] } });
    return { explain, views };
  }

  async translate() {
    const run = runNamed(this.runs, $("translate-run").value);
    const level = this.form.elements.level.value;
    const text = $("translate-text").value;
    say(this.status, "Translating…", "busy");
    try {
      const answer = await this.request(TRANSLATE, { json: {
        run: run.name, text, beam: numberOf($("translate-beam")),
        nbest: numberOf($("translate-nbest")), level,
        ...(run.heads ? { heads: true } : {}), // a Transformer's every layer and head
      } });
      this.show(answer, run, level, text);
    } catch (error) {
      if (error?.name !== "AbortError") this.results.clear();
      sayError(this.status, error);
    }
  }

  listen() {
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.translate();
    });
    this.form.addEventListener("change", (event) => {
      if (event.target.name === "level" && this.results.shown) this.translate();
    });
  }
}

/** The translate tab; returns the runs it lists. */
export function initTranslate(runs) {
  return new TranslateView(runs).runs;
}
