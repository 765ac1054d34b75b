// Translations of one sentence by several runs, side by side: a card per run (its name,
// mechanism, best hypothesis and heatmap), drawn the same on the explorer page's Compare tab
// and in a notebook.

import { fitFigure } from "./fit.js";
import { chosenWeights, defaultChoice, headCounts, headSelect } from "./heads.js";
import { heatmap } from "./heatmap.js";
import { titleOf } from "./runs.js";
import { stack } from "./svg.js";
import { checkedAttention } from "./translation-view.js";

const CARD_FRAME = 26; // a card's padding and border across (style.css), in pixels

/** A card for run ({ name, mechanism }): its hypothesis' heatmap, or failure (a sentence); a
 *  hypothesis with heads (a Transformer's) gets a select of its layers and heads, which
 *  redraws the heatmap. Returns { figure, map } (map null without attention; the map shown). */
export function card(run, hypothesis, failure) {
  const figure = document.createElement("figure");
  figure.className = "card";
  figure.dataset.run = run.name;
  const caption = document.createElement("figcaption");
  const name = Object.assign(document.createElement("strong"), { textContent: run.name });
  const mechanism = Object.assign(document.createElement("span"),
    { className: "mechanism", textContent: run.mechanism || "" });
  caption.append(name, " ", mechanism);
  figure.append(caption);
  const line = document.createElement("p");
  if (failure) {
    line.className = "card-error";
    line.textContent = failure;
    figure.append(line);
    return { figure, map: null };
  }
  line.className = "hyp-text";
  line.textContent = hypothesis.text || "(empty)";
  figure.append(line);
  if (hypothesis.note) {
    figure.append(Object.assign(document.createElement("p"),
      { className: "card-note", textContent: hypothesis.note }));
  }
  const attention = checkedAttention(hypothesis);
  const box = document.createElement("div");
  box.className = "scroll";
  figure.append(box);
  if (!attention) {
    box.textContent = "No attention in this run.";
    return { figure, map: null };
  }
  const drawn = { figure, map: null };
  const draw = (choice) => {
    const map = heatmap({ rows: hypothesis.tokens, cols: hypothesis.source_tokens,
      weights: choice ? chosenWeights(hypothesis.heads, choice) : attention, cell: 22 });
    // side by side while the cards fit at their heatmaps' own size, one under another when
    // not; a card wider than the whole row draws its heatmap smaller (fit.js)
    figure.style.flexBasis = `${Number(map.svg.getAttribute("width")) + CARD_FRAME}px`;
    fitFigure(box, map.svg);
    drawn.map = map;
  };
  const counts = headCounts([hypothesis]);
  if (counts) box.before(headSelect(counts, defaultChoice(counts), draw));
  draw(counts ? defaultChoice(counts) : null);
  return drawn;
}

/** The figure the downloads save: the cards' heatmaps side by side, each under its run. */
export function compareFigure(entries) {
  return stack(entries.map((entry) => ({ svg: entry.map.snapshot(), title: titleOf(entry.run) })));
}
