// The LSTMN tab: how a language model with intra-attention reads a sentence (Cheng, Dong &
// Lapata 2016, Fig. 1): one line per step, the word being read emphasised, the earlier words
// shaded by the weight it gives them; and the same weights as a step x step matrix.

import { ApiError, latest, say, sayError } from "./api.js";
import { inkOn, legend, shade } from "./colour.js";
import { downloadBar } from "./download.js";
import { heatmap } from "./heatmap.js";
import { pickRuns, runNamed, titleOf } from "./runs.js";
import { ACCENT, el, label, MUTED, stack, svgRoot, text, textWidth } from "./svg.js";

const $ = (id) => document.getElementById(id);
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

function check(answer) {
  const { tokens, weights } = answer;
  const fits = Array.isArray(tokens) && Array.isArray(weights) && weights.length === tokens.length
    && weights.every((row, t) => row.length >= t);
  if (!fits) throw new ApiError("The weights sent by the server do not match the words.");
}

export function initReading(runs) {
  const form = $("read-form");
  const status = $("read-status");
  const request = latest();
  const mine = pickRuns($("read-run"), runs, "lm", status);
  let shown = null; // { run, answer, figure, matrix }

  const updateDownloads = downloadBar($("read-downloads"), () => shown && {
    run: shown.run.name,
    svg: () => stack([{ svg: shown.figure, title: titleOf(shown.run) },
      { svg: shown.matrix.snapshot() }], { direction: "column", gap: 12 }),
    data: () => ({ run: shown.run.name, mechanism: shown.run.mechanism, ...shown.answer }),
  }, (message) => say(status, message, "error"));

  async function read() {
    const run = runNamed(mine, $("read-run").value);
    say(status, "Reading…", "busy");
    try {
      const answer = await request("/api/read", { json: { run: run.name,
        text: $("read-text").value } });
      check(answer);
      const { tokens, weights } = answer;
      const figure = readingFigure(tokens, weights);
      const matrix = heatmap({ rows: tokens, cols: tokens, weights, cell: 22,
        masked: (t, i) => i >= t, rowName: "step", colName: "earlier word" });
      shown = { run, answer, figure, matrix };
      $("read-figure").replaceChildren(figure);
      $("read-matrix").replaceChildren(matrix.svg);
      $("read-results").hidden = false;
      say(status, `${run.name} read ${tokens.length} tokens, one step each.`);
    } catch (error) {
      if (error?.name !== "AbortError") {
        $("read-results").hidden = true;
        shown = null;
      }
      sayError(status, error);
    }
    updateDownloads();
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    read();
  });
}
