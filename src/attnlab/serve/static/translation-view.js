// A translation's results, drawn the same on the explorer page and in a notebook: the n-best
// list, a step slider that replays the decoding one target token at a time, the heatmap of the
// chosen hypothesis and its downloads, and a switch that redraws the heatmap with an
// attribution of the same output (explain-view.js); for a model with heads (a Transformer's
// every layer and head, heads.js) a layer and head to show, and the grid of them all. Ids inside are `${prefix}-...`, so views
// don't clash.

import { ApiError } from "./api.js";
import { downloadBar } from "./download.js";
import { explanationMap, fillViews, viewCaption, viewName } from "./explain-view.js";
import { fitFigure } from "./fit.js";
import { choiceName, fillHeadControls, fittedChoice, headCounts, headsGrid, readHeadControls,
  withChoice } from "./heads.js";
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
      <fieldset id="${p}-views" class="toggle views" hidden></fieldset>
      <fieldset id="${p}-heads" class="toggle heads" hidden></fieldset>
      <p id="${p}-views-note" class="views-note" hidden></p>
      <div id="${p}-figure" class="scroll"></div>
      <figcaption>Rows: the tokens it wrote; columns: the tokens it read. Hover or focus a
        word to see what it <span id="${p}-verb">attended to</span> (arrow keys move between
        words).</figcaption>
      <p id="${p}-view-caption" class="view-caption" hidden></p>
      <div id="${p}-downloads" class="downloads" role="group" aria-label="Download the figure">
        <span>Download</span>
        <button type="button" data-format="svg">SVG</button>
        <button type="button" data-format="png">PNG</button>
        <button type="button" data-format="json">Weights (JSON)</button>
      </div>
      <div id="${p}-grid" class="scroll heads-scroll" hidden></div>
    </figure>`;
}

/**
 * The results in `box` (a .results element, filled here). show({ name, title, hypotheses,
 * data, explain, views, unavailable }) draws them: name for file names, title above the
 * figure, data() -> the JSON download; explain(hypothesis, index, view) -> an explanation
 * ({ source_pieces, target_pieces, views }, as POST /api/explain answers) or a Promise of one,
 * for the attributions in `views` (default: all three); without it, unavailable: why the
 * switch offers attention only (null: no switch); choice: the layer and head shown first when
 * the hypotheses have heads ({ layer, head } from 0, head null: the layer's mean; default the
 * last layer's mean, or what was chosen before). report(message, kind) hears of a problem.
 */
/** text with its first letter upper-case. */
function capital(text) {
  return `${text[0].toUpperCase()}${text.slice(1)}`;
}

export class TranslationResults {
  constructor(box, prefix, report) {
    this.box = box;
    this.prefix = prefix;
    this.report = report;
    box.innerHTML = markup(prefix);
    this.slider = this.part("step");
    this.switch = this.part("views");
    this.view = "attention"; // the view chosen, kept from one translation to the next
    this.choice = null; // the layer and head chosen ({ layer, head }), kept likewise
    this.grid = false; // whether the grid of every layer and head is shown
    this.ticket = 0; // the latest drawing asked for: an older answer arriving late is dropped
    // { name, title, hypotheses, index, map, data, view, step, explanation, answers, ... }
    this.shown = null;
    this.updateDownloads = downloadBar(this.part("downloads"), () => this.figure(),
      (message) => report(message, "error"));
    this.listen();
  }

  part(name) {
    return this.box.querySelector(`#${this.prefix}-${name}`);
  }

  figure() {
    const shown = this.shown;
    if (!shown?.map) return null;
    const attention = shown.view === "attention";
    const named = `${shown.title} · ${viewName(shown.view)}`; // with a switch, the view it shows
    const heads = shown.counts && attention ? ` · ${choiceName(this.choice)}` : "";
    const title = !shown.explain ? `${shown.title}${heads}`
      : attention ? `${named}${heads}` : `${named} (|row| / max)`;
    return {
      run: shown.name,
      svg: () => translationFigure(shown.map, title),
      data: () => {
        const data = shown.data(shown.hypotheses[shown.index]);
        if (!attention) return { ...data, view: shown.view, explanation: shown.explanation };
        return shown.counts ? { ...data, choice: this.choice } : data;
      },
    };
  }

  /** Reveal the decoding up to step k: rows 0..k-1, the text so far. */
  step(k) {
    const tokens = this.shown.map.rows;
    const [before, current] = partial(tokens, k);
    const mark = Object.assign(document.createElement("mark"), { textContent: current });
    this.part("partial").replaceChildren(before, mark);
    this.part("step-out").textContent = `${k} of ${tokens.length}`;
  }

  /** The views the switch offers for the shown hypotheses: attention when they have it, and
   *  the attributions the caller can explain. */
  available() {
    const { hypotheses, explain, views } = this.shown;
    const attention = hypotheses.some((h) => h.attention !== null && h.attention !== undefined);
    return [...(attention ? ["attention"] : []), ...(explain ? views : [])];
  }

  /** Draw hypothesis `index` of the n-best list, in the chosen view. */
  choose(index) {
    Object.assign(this.shown, { index, step: null });
    this.draw(this.view);
    this.drawGrid();
  }

  /** Draw the chosen hypothesis in `view`: its attention at once; an attribution from the
   *  explanations already given, else asked for (the switch says so while it waits). */
  draw(view) {
    const shown = this.shown;
    const ticket = ++this.ticket;
    if (view === "attention" || !shown.explain || !shown.views.includes(view)) {
      let map = null;
      try {
        map = hypothesisMap(withChoice(shown.hypotheses[shown.index], this.choice));
      } catch (error) {
        this.report(error.message, "error");
      }
      this.render(map, "attention", null);
      this.sayShown("Attention of this output.");
      return;
    }
    const key = `${shown.index}:${view}`;
    let found = shown.answers.get(key);
    if (found === undefined) {
      found = shown.explain(shown.hypotheses[shown.index], shown.index, view);
      shown.answers.set(key, found);
    }
    if (!(found instanceof Promise)) {
      this.drawExplanation(found, view);
      this.sayShown(`${capital(viewName(view))} of this output (computed before).`);
      return;
    }
    const started = performance.now();
    this.report(`Computing ${viewName(view)} of this output on the server…`, "busy");
    found.then((explanation) => {
      shown.answers.set(key, explanation);
      if (ticket !== this.ticket || this.shown !== shown) return;
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      this.report(`${capital(viewName(view))} of this output, computed in ${seconds} s.`);
      this.timed = true; // from now on each view drawn replaces this line (sayShown)
      this.drawExplanation(explanation, view);
    }, (error) => {
      shown.answers.delete(key); // asked again when chosen again
      if (ticket !== this.ticket || this.shown !== shown || error?.name === "AbortError") return;
      this.report(error instanceof ApiError ? error.message
        : "The explanation could not be shown.", "error");
      this.check(shown.view); // the switch back on what is drawn
    });
  }

  /** The grid of every layer and head of the chosen hypothesis, when asked for. */
  drawGrid() {
    const shown = this.shown;
    const box = this.part("grid");
    const hypothesis = shown.hypotheses[shown.index];
    box.hidden = !(this.grid && shown.counts && hypothesis.heads);
    if (box.hidden) {
      box.replaceChildren();
      return;
    }
    const hint = Object.assign(document.createElement("p"), { className: "heads-hint",
      textContent: "Every layer and head of this output; choose one to see it above." });
    box.replaceChildren(hint, headsGrid(hypothesis, shown.counts, this.choice,
      (choice) => this.chooseHead(choice)));
  }

  /** Show layer and head `choice` ({ layer, head } from 0), at the step the slider is at;
   *  `refill`: set the selects to it (a choice made in the grid). */
  chooseHead(choice, refill = true) {
    this.choice = choice;
    if (refill) {
      fillHeadControls(this.part("heads"), this.prefix, this.shown.counts, choice, this.grid);
    }
    this.view = "attention";
    this.check("attention");
    this.draw("attention");
    this.drawGrid();
  }

  /** Once a "computed in" line was said for this output, each view drawn says what it is
   *  (never a stale timing under another view). */
  sayShown(message) {
    if (this.timed) this.report(message, "ok");
  }

  drawExplanation(explanation, view) {
    let map = null;
    try {
      map = explanationMap(explanation, view);
    } catch (error) {
      this.report(error.message, "error");
      this.check(this.shown.view);
      return;
    }
    this.render(map, view, explanation);
  }

  /** Show map (null: nothing to draw) as view, at the step the slider was moved to. */
  render(map, view, explanation) {
    const shown = this.shown;
    Object.assign(shown, { map, view, explanation });
    this.check(view);
    const figure = this.part("figure");
    const caption = this.part("view-caption");
    caption.textContent = map ? viewCaption(view) : "";
    caption.hidden = !caption.textContent;
    this.part("verb").textContent = view === "attention" ? "attended to" : "relied on";
    this.part("stepper").hidden = !map;
    if (!map) {
      const more = shown.explain && shown.views.length
        ? " Choose an attribution under Show to see what each output token relied on." : "";
      const note = Object.assign(document.createElement("p"), { className: "empty",
        textContent: `No attention to draw for this run: only its translation.${more}` });
      figure.replaceChildren(note);
    } else {
      fitFigure(figure, map.svg); // smaller to fit, or a scroll that says so
      const rows = map.rows.length;
      const k = shown.step === null ? rows : Math.min(shown.step, rows);
      this.slider.max = rows;
      this.slider.value = k;
      if (shown.step !== null) map.setStep(k);
      this.step(k);
    }
    this.updateDownloads();
  }

  /** The switch: each view it offers, `view` checked. */
  check(view) {
    const radio = this.switch.querySelector(`input[value="${view}"]`);
    if (radio) radio.checked = true;
  }

  show({ name, title, hypotheses, data, explain = null, views = null,
    unavailable = null, choice = null }) {
    this.timed = false; // a new output: the tab says what it is
    const counts = headCounts(hypotheses);
    this.shown = { name, title, hypotheses, data, explain, index: 0, map: null, step: null,
      view: "attention", explanation: null, answers: new Map(), counts,
      views: explain ? views ?? ["gradient", "integrated_gradients", "erasure"] : [] };
    const heads = this.part("heads");
    heads.hidden = !counts;
    this.choice = counts ? fittedChoice(choice ?? this.choice, counts) : null;
    if (counts) fillHeadControls(heads, this.prefix, counts, this.choice, this.grid);
    this.part("hypotheses").replaceChildren(...hypotheses.map((hypothesis, index) =>
      hypothesisItem(hypothesis, index, `${this.prefix}-hypothesis`)));
    const offered = explain || unavailable;
    this.switch.hidden = !offered;
    if (offered) fillViews(this.switch, `${this.prefix}-view`, this.available(), this.view);
    const note = this.part("views-note");
    note.textContent = explain ? "" : unavailable ?? "";
    note.hidden = !note.textContent;
    this.box.hidden = false;
    this.choose(0);
  }

  clear() {
    this.ticket += 1;
    this.box.hidden = true;
    this.shown = null;
    this.updateDownloads();
  }

  listen() {
    this.part("hypotheses").addEventListener("change",
      (event) => this.choose(Number(event.target.value)));
    this.switch.addEventListener("change", (event) => {
      if (!this.shown) return;
      this.view = event.target.value;
      this.draw(this.view);
    });
    this.part("heads").addEventListener("change", (event) => {
      if (!this.shown?.counts) return;
      if (event.target.type === "checkbox") {
        this.grid = event.target.checked;
        this.drawGrid();
        return;
      }
      this.chooseHead(readHeadControls(this.part("heads"), this.prefix), false);
    });
    this.slider.addEventListener("input", () => {
      if (!this.shown?.map) return;
      const k = Number(this.slider.value);
      this.shown.step = k;
      this.shown.map.setStep(k);
      this.step(k);
    });
  }
}
