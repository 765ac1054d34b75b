// An LSTMN's reading of a sentence, drawn the same on the explorer page and in a notebook
// (Cheng, Dong & Lapata 2016, Fig. 1): one line per step, the word being read emphasised, the
// earlier words shaded by the weight it gives them; and the same weights as a step x step
// matrix. Ids inside are `${prefix}-...`.

import { ApiError } from "./api.js";
import { inkOn, legend, shade } from "./colour.js";
import { downloadBar } from "./download.js";
import { heatmap } from "./heatmap.js";
import { ACCENT, el, label, MUTED, stack, svgRoot, text, textWidth } from "./svg.js";

const SIZE = 13;
const LINE = 26;
const GAP = 8;
const FUTURE = "#9aa0a6";

/** The reading figure: tokens (T,), weights (T, T) or ragged, row t over positions i < t. */
export function readingFigure(tokens, weights) {
  const shown = tokens.map((token) => label(token, 24));
  const widths = shown.map((s) => textWidth(s, SIZE, "bold"));
  const left = 40;
  const xs = widths.reduce((acc, w, i) => [...acc, acc[i] + w + GAP], [left]);
  const width = Math.ceil(Math.max(xs[tokens.length] + 12, left + 180));
  const height = tokens.length * LINE + 64;
  const svg = svgRoot(width, height,
    `How the model reads “${tokens.join(" ")}”: one line per step over the earlier words`);
  svg.classList.add("reading");
  shown.forEach((_, t) => {
    const y = 12 + t * LINE;
    const line = el("g", { class: "reading-line", "data-step": t }, svg);
    text(line, String(t + 1), { x: left - 12, y: y + LINE / 2, dy: "0.35em",
      "text-anchor": "end", fill: MUTED, "font-size": 11 });
    shown.forEach((word, i) => {
      const x = xs[i];
      const attrs = { x, y: y + LINE / 2, dy: "0.35em", "font-size": SIZE };
      if (i < t) {
        const weight = Number(weights[t]?.[i] ?? 0);
        const box = el("rect", { x: x - 3, y: y + 3, width: widths[i] + 6, height: LINE - 6,
          rx: 3, fill: shade(weight), class: "memory", "data-weight": weight.toFixed(4) }, line);
        el("title", {}, box).textContent = `step ${t + 1} → ${tokens[i]}: ${weight.toFixed(3)}`;
        text(line, word, { ...attrs, fill: inkOn(weight) });
      } else if (i === t) {
        text(line, word, { ...attrs, fill: ACCENT, "font-weight": "bold", class: "current" });
      } else {
        text(line, word, { ...attrs, fill: FUTURE });
      }
    });
  });
  legend(svg, left, tokens.length * LINE + 20, 160);
  return svg;
}

/** The step x step matrix of the same weights (a Heatmap: hover a step, see what it read). */
export function readingMatrix(tokens, weights) {
  return heatmap({ rows: tokens, cols: tokens, weights, cell: 22,
    masked: (t, i) => i >= t, rowName: "step", colName: "earlier word" });
}

/** The figure the downloads save: the reading figure over the matrix, under the title. */
export function readingDownload(figure, matrix, title) {
  return stack([{ svg: figure, title }, { svg: matrix.snapshot() }],
    { direction: "column", gap: 12 });
}

/** Throws a sentence when the weights do not fit the tokens. */
export function checkReading(answer) {
  const { tokens, weights } = answer;
  const fits = Array.isArray(tokens) && Array.isArray(weights) && weights.length === tokens.length
    && weights.every((row, t) => row.length >= t);
  if (!fits) throw new ApiError("The weights sent by the server do not match the words.");
}

function markup(p) {
  return `
    <figure class="figure">
      <div id="${p}-figure" class="scroll"></div>
      <figcaption>One line per step: the word being read in bold orange, each earlier word
        shaded by the weight the step gives it, later words grey (Cheng et al. 2016,
        Fig. 1).</figcaption>
    </figure>
    <figure class="figure">
      <div id="${p}-matrix" class="scroll"></div>
      <figcaption>The same weights as a matrix: row t over the words before it.</figcaption>
    </figure>
    <div id="${p}-downloads" class="downloads" role="group" aria-label="Download the figure">
      <span>Download</span>
      <button type="button" data-format="svg">SVG</button>
      <button type="button" data-format="png">PNG</button>
      <button type="button" data-format="json">Weights (JSON)</button>
    </div>`;
}

/** The results in `box` (filled here). show({ name, title, answer: { tokens, weights },
 *  data }) draws a reading; report(message, kind) hears of a problem. */
export class ReadingResults {
  constructor(box, prefix, report) {
    this.box = box;
    this.prefix = prefix;
    box.innerHTML = markup(prefix);
    this.shown = null; // { name, title, answer, figure, matrix, data }
    this.updateDownloads = downloadBar(this.part("downloads"), () => this.shown && {
      run: this.shown.name,
      svg: () => readingDownload(this.shown.figure, this.shown.matrix, this.shown.title),
      data: () => this.shown.data(),
    }, (message) => report(message, "error"));
  }

  part(name) {
    return this.box.querySelector(`#${this.prefix}-${name}`);
  }

  show({ name, title, answer, data }) {
    checkReading(answer);
    const { tokens, weights } = answer;
    const figure = readingFigure(tokens, weights);
    const matrix = readingMatrix(tokens, weights);
    this.shown = { name, title, answer, figure, matrix, data };
    this.part("figure").replaceChildren(figure);
    this.part("matrix").replaceChildren(matrix.svg);
    this.box.hidden = false;
    this.updateDownloads();
  }

  clear() {
    this.box.hidden = true;
    this.shown = null;
    this.updateDownloads();
  }
}
