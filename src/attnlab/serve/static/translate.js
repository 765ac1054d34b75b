// The Translate tab: a sentence in, the n-best list out, and for the chosen hypothesis its
// attention heatmap with a step slider that replays the decoding one target token at a time.

import { ApiError, latest, say, sayError } from "./api.js";
import { downloadBar } from "./download.js";
import { heatmap } from "./heatmap.js";
import { pickRuns, runNamed, titleOf } from "./runs.js";
import { joinTokens, stack } from "./svg.js";

const $ = (id) => document.getElementById(id);

/** The hypothesis' attention when it fits its tokens; throws a sentence when it does not. */
export function checkedAttention(hypothesis) {
  const { attention, tokens, source_tokens: source } = hypothesis;
  if (attention === null || attention === undefined) return null;
  const fits = attention.length === tokens.length
    && attention.every((row) => row.length === source.length);
  if (!fits) throw new ApiError("The attention sent by the server does not match its tokens.");
  return attention;
}

/** A number input's value, or undefined when empty (the server then uses its default). */
export function numberOf(input) {
  return input.value.trim() === "" ? undefined : Number(input.value);
}

/** One entry of the n-best list: a radio labelled with the text and its score. */
function hypothesisItem(hypothesis, index) {
  const item = document.createElement("li");
  const labelNode = document.createElement("label");
  const radio = Object.assign(document.createElement("input"),
    { type: "radio", name: "hypothesis", value: String(index), checked: index === 0 });
  const words = Object.assign(document.createElement("span"),
    { className: "hyp-text", textContent: hypothesis.text || "(empty)" });
  const score = Object.assign(document.createElement("span"),
    { className: "score", textContent: Number(hypothesis.score).toFixed(3) });
  score.title = "log-probability score";
  labelNode.append(radio, words, score);
  item.append(labelNode);
  return item;
}

/** The output up to step k, the k-th token marked: [text before, marked text]. */
function partial(tokens, k) {
  const before = joinTokens(tokens.slice(0, k - 1), tokens);
  const upTo = joinTokens(tokens.slice(0, k), tokens);
  return upTo.startsWith(before) ? [before, upTo.slice(before.length)] : [upTo, tokens[k - 1]];
}

/** The tab: its form, the n-best list, the step slider, the heatmap and the downloads. */
class TranslateView {
  constructor(runs) {
    this.form = $("translate-form");
    this.status = $("translate-status");
    this.slider = $("translate-step");
    this.request = latest();
    this.runs = pickRuns($("translate-run"), runs, "translation", this.status);
    this.shown = null; // { run, level, text, hypotheses, index, map }
    this.updateDownloads = downloadBar($("translate-downloads"), () => this.figure(),
      (message) => say(this.status, message, "error"));
    this.listen();
  }

  figure() {
    const shown = this.shown;
    return shown?.map && {
      run: shown.run.name,
      svg: () => stack([{ svg: shown.map.snapshot(),
        title: `${titleOf(shown.run)} · ${shown.level}` }]),
      data: () => ({ run: shown.run.name, mechanism: shown.run.mechanism, level: shown.level,
        text: shown.text, hypothesis: shown.hypotheses[shown.index] }),
    };
  }

  /** Reveal the decoding up to step k: rows 0..k-1, the text so far. */
  step(k) {
    const tokens = this.shown.hypotheses[this.shown.index].tokens;
    const [before, current] = partial(tokens, k);
    const mark = Object.assign(document.createElement("mark"), { textContent: current });
    $("translate-partial").replaceChildren(before, mark);
    $("translate-step-out").textContent = `${k} of ${tokens.length}`;
  }

  /** Draw hypothesis `index` of the n-best list. */
  choose(index) {
    const hypothesis = this.shown.hypotheses[index];
    const box = $("translate-figure");
    Object.assign(this.shown, { index, map: null });
    let attention = null;
    try {
      attention = checkedAttention(hypothesis);
    } catch (error) {
      say(this.status, error.message, "error");
    }
    $("translate-stepper").hidden = !attention;
    if (!attention) {
      const note = Object.assign(document.createElement("p"), { className: "empty",
        textContent: "No attention to draw for this run: only its translation." });
      box.replaceChildren(note);
    } else {
      this.shown.map = heatmap({ rows: hypothesis.tokens, cols: hypothesis.source_tokens,
        weights: attention });
      box.replaceChildren(this.shown.map.svg);
      this.slider.max = hypothesis.tokens.length;
      this.slider.value = hypothesis.tokens.length;
      this.step(hypothesis.tokens.length);
    }
    this.updateDownloads();
  }

  show(answer, run, level, text) {
    const hypotheses = answer.hypotheses ?? [];
    if (!hypotheses.length) {
      this.clear();
      say(this.status, "The model wrote no translation for this sentence.", "error");
      return;
    }
    this.shown = { run, level, text, hypotheses, index: 0, map: null };
    $("translate-hypotheses").replaceChildren(...hypotheses.map(hypothesisItem));
    $("translate-results").hidden = false;
    const count = hypotheses.length === 1 ? "1 hypothesis" : `${hypotheses.length} hypotheses`;
    say(this.status, `${count} from ${run.name}.`);
    this.choose(0);
  }

  clear() {
    $("translate-results").hidden = true;
    this.shown = null;
    this.updateDownloads();
  }

  async translate() {
    const run = runNamed(this.runs, $("translate-run").value);
    const level = this.form.elements.level.value;
    const text = $("translate-text").value;
    say(this.status, "Translating…", "busy");
    try {
      const answer = await this.request("/api/translate", { json: {
        run: run.name, text, beam: numberOf($("translate-beam")),
        nbest: numberOf($("translate-nbest")), level,
      } });
      this.show(answer, run, level, text);
    } catch (error) {
      if (error?.name !== "AbortError") this.clear();
      sayError(this.status, error);
    }
  }

  listen() {
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.translate();
    });
    this.form.addEventListener("change", (event) => {
      if (event.target.name === "level" && this.shown) this.translate();
    });
    $("translate-hypotheses").addEventListener("change",
      (event) => this.choose(Number(event.target.value)));
    this.slider.addEventListener("input", () => {
      if (!this.shown?.map) return;
      const k = Number(this.slider.value);
      this.shown.map.setStep(k);
      this.step(k);
    });
  }
}

export function initTranslate(runs) {
  return new TranslateView(runs);
}
