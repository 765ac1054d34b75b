// A translation's results, drawn the same on the explorer page and in a notebook: the n-best
// list, a step slider that replays the decoding one target token at a time, the heatmap of the
// chosen hypothesis and its downloads. Ids inside are `${prefix}-...`, so views don't clash.

import { ApiError } from "./api.js";
import { downloadBar } from "./download.js";
import { fitFigure } from "./fit.js";
import { heatmap } from "./heatmap.js";
import { joinTokens, stack } from "./svg.js";

/** The hypothesis' attention when it fits its tokens; throws a sentence when it does not. */
export function checkedAttention(hypothesis) {
  const { attention, tokens, source_tokens: source } = hypothesis;
  if (attention === null || attention === undefined) return null;
  const fits = attention.length === tokens.length
    && attention.every((row) => row.length === source.length);
  if (!fits) throw new ApiError("The attention sent by the server does not match its tokens.");
  return attention;
}

/** The figure the downloads save: the heatmap (no hover) under its title. */
export function translationFigure(map, title) {
  return stack([{ svg: map.snapshot(), title }]);
}

/** The heatmap of one hypothesis (null: no attention to draw). */
export function hypothesisMap(hypothesis, options = {}) {
  const attention = checkedAttention(hypothesis);
  return attention && heatmap({ rows: hypothesis.tokens, cols: hypothesis.source_tokens,
    weights: attention, ...options });
}

/** The output up to step k, the k-th token marked: [text before, marked text]. */
function partial(tokens, k) {
  const before = joinTokens(tokens.slice(0, k - 1), tokens);
  const upTo = joinTokens(tokens.slice(0, k), tokens);
  return upTo.startsWith(before) ? [before, upTo.slice(before.length)] : [upTo, tokens[k - 1]];
}

/** One entry of the n-best list: a radio labelled with the text and its score. */
function hypothesisItem(hypothesis, index, group) {
  const item = document.createElement("li");
  const labelNode = document.createElement("label");
  const radio = Object.assign(document.createElement("input"),
    { type: "radio", name: group, value: String(index), checked: index === 0 });
  const words = Object.assign(document.createElement("span"),
    { className: "hyp-text", textContent: hypothesis.text || "(empty)" });
  const score = Object.assign(document.createElement("span"),
    { className: "score", textContent: Number(hypothesis.score).toFixed(3) });
  score.title = "log-probability score";
  labelNode.append(radio, words, score);
  item.append(labelNode);
  return item;
}

function markup(p) {
  return `
    <div class="side">
      <fieldset class="hypotheses">
        <legend>Hypotheses, best first</legend>
        <ol id="${p}-hypotheses"></ol>
      </fieldset>
      <div id="${p}-stepper" class="stepper">
        <label for="${p}-step">Decoding step</label>
        <div class="step-row">
          <input id="${p}-step" type="range" min="1" max="1" value="1">
          <output id="${p}-step-out" for="${p}-step"></output>
        </div>
        <p id="${p}-partial" class="partial" aria-live="polite"></p>
      </div>
    </div>
    <figure class="figure">
      <div id="${p}-figure" class="scroll"></div>
      <figcaption>Rows: the tokens it wrote; columns: the tokens it read. Hover or focus a
        word to see what it attended to (arrow keys move between words).</figcaption>
      <div id="${p}-downloads" class="downloads" role="group" aria-label="Download the figure">
        <span>Download</span>
        <button type="button" data-format="svg">SVG</button>
        <button type="button" data-format="png">PNG</button>
        <button type="button" data-format="json">Weights (JSON)</button>
      </div>
    </figure>`;
}

/**
 * The results in `box` (a .results element, filled here). show({ name, title, level,
 * hypotheses, data }) draws them: name for file names, title above the figure, data() -> the
 * JSON download; report(message, kind) hears of a problem.
 */
export class TranslationResults {
  constructor(box, prefix, report) {
    this.box = box;
    this.prefix = prefix;
    this.report = report;
    box.innerHTML = markup(prefix);
    this.slider = this.part("step");
    this.shown = null; // { name, title, hypotheses, index, map, data }
    this.updateDownloads = downloadBar(this.part("downloads"), () => this.figure(),
      (message) => report(message, "error"));
    this.listen();
  }

  part(name) {
    return this.box.querySelector(`#${this.prefix}-${name}`);
  }

  figure() {
    const shown = this.shown;
    return shown?.map && {
      run: shown.name,
      svg: () => translationFigure(shown.map, shown.title),
      data: () => shown.data(shown.hypotheses[shown.index]),
    };
  }

  /** Reveal the decoding up to step k: rows 0..k-1, the text so far. */
  step(k) {
    const tokens = this.shown.hypotheses[this.shown.index].tokens;
    const [before, current] = partial(tokens, k);
    const mark = Object.assign(document.createElement("mark"), { textContent: current });
    this.part("partial").replaceChildren(before, mark);
    this.part("step-out").textContent = `${k} of ${tokens.length}`;
  }

  /** Draw hypothesis `index` of the n-best list. */
  choose(index) {
    const hypothesis = this.shown.hypotheses[index];
    const figure = this.part("figure");
    Object.assign(this.shown, { index, map: null });
    try {
      this.shown.map = hypothesisMap(hypothesis);
    } catch (error) {
      this.report(error.message, "error");
    }
    const map = this.shown.map;
    this.part("stepper").hidden = !map;
    if (!map) {
      const note = Object.assign(document.createElement("p"), { className: "empty",
        textContent: "No attention to draw for this run: only its translation." });
      figure.replaceChildren(note);
    } else {
      fitFigure(figure, map.svg); // smaller to fit, or a scroll that says so
      this.slider.max = hypothesis.tokens.length;
      this.slider.value = hypothesis.tokens.length;
      this.step(hypothesis.tokens.length);
    }
    this.updateDownloads();
  }

  show({ name, title, hypotheses, data }) {
    this.shown = { name, title, hypotheses, data, index: 0, map: null };
    this.part("hypotheses").replaceChildren(...hypotheses.map((hypothesis, index) =>
      hypothesisItem(hypothesis, index, `${this.prefix}-hypothesis`)));
    this.box.hidden = false;
    this.choose(0);
  }

  clear() {
    this.box.hidden = true;
    this.shown = null;
    this.updateDownloads();
  }

  listen() {
    this.part("hypotheses").addEventListener("change",
      (event) => this.choose(Number(event.target.value)));
    this.slider.addEventListener("input", () => {
      if (!this.shown?.map) return;
      const k = Number(this.slider.value);
      this.shown.map.setStep(k);
      this.step(k);
    });
  }
}
