// A Transformer's cross-attention by layer and head: a hypothesis that carries `heads`
// (layers, heads, target tokens, source tokens) offers a layer and a head (or the layer's mean
// over its heads); the chosen weights replace its attention, so the step slider, hover and
// downloads read them. The grid draws every layer x head (and each layer's mean) with the
// heatmap's own code; picking a panel chooses it. Choices count from 0 here, from 1 on screen.

import { heatmap } from "./heatmap.js";

// A panel of the grid: at most this share of its heatmap's size, smaller to fit the row of a
// layer's heads in the box (down to MIN_PANEL pixels, past which the box scrolls sideways).
const GRID_SCALE = 0.6;
const MIN_PANEL = 90;

/** { layers, heads } of the first hypothesis that has heads, or null (a model without). */
export function headCounts(hypotheses) {
  const found = hypotheses.find((h) => Array.isArray(h.heads) && h.heads.length);
  return found ? { layers: found.heads.length, heads: found.heads[0].length } : null;
}

/** The default: the last layer's mean over its heads (what attnlab reads everywhere). */
export function defaultChoice(counts) {
  return { layer: counts.layers - 1, head: null };
}

/** A choice that fits counts, else the default. */
export function fittedChoice(choice, counts) {
  const fits = choice && choice.layer >= 0 && choice.layer < counts.layers
    && (choice.head === null || (choice.head >= 0 && choice.head < counts.heads));
  return fits ? choice : defaultChoice(counts);
}

/** "layer 2 · head 3" or "layer 2 · mean of heads". */
export function choiceName({ layer, head }) {
  return `layer ${layer + 1} · ${head === null ? "mean of heads" : `head ${head + 1}`}`;
}

/** The weights (T, S) of one layer's head, or the layer's mean over heads (head null). */
export function chosenWeights(heads, { layer, head }) {
  const matrices = heads[layer];
  if (head !== null) return matrices[head];
  return matrices[0].map((row, i) => row.map((_, j) =>
    matrices.reduce((sum, matrix) => sum + matrix[i][j], 0) / matrices.length));
}

/** The hypothesis showing `choice` as its attention (itself when it has no heads). */
export function withChoice(hypothesis, choice) {
  if (!choice || !Array.isArray(hypothesis.heads) || !hypothesis.heads.length) return hypothesis;
  return { ...hypothesis, attention: chosenWeights(hypothesis.heads, choice) };
}

function option(value, text, selected) {
  return Object.assign(document.createElement("option"), { value, textContent: text, selected });
}

/** Fill `fieldset` with a layer select and a head select (ids `${prefix}-layer`,
 *  `${prefix}-head`) for `counts`, `choice` selected, and the grid's checkbox. */
export function fillHeadControls(fieldset, prefix, counts, choice, grid) {
  const legend = Object.assign(document.createElement("legend"),
    { textContent: "Cross-attention" });
  const layer = Object.assign(document.createElement("select"), { id: `${prefix}-layer` });
  for (let l = 0; l < counts.layers; l += 1) {
    layer.append(option(String(l), `layer ${l + 1}`, l === choice.layer));
  }
  const head = Object.assign(document.createElement("select"), { id: `${prefix}-head` });
  head.append(option("mean", "mean of heads", choice.head === null));
  for (let h = 0; h < counts.heads; h += 1) {
    head.append(option(String(h), `head ${h + 1}`, h === choice.head));
  }
  const labelled = (control, text) => {
    const node = Object.assign(document.createElement("label"), { htmlFor: control.id });
    node.append(`${text} `, control);
    return node;
  };
  const all = Object.assign(document.createElement("input"),
    { type: "checkbox", id: `${prefix}-grid-on`, checked: grid });
  const allLabel = Object.assign(document.createElement("label"), { htmlFor: all.id });
  allLabel.append(all, " all heads");
  fieldset.replaceChildren(legend, labelled(layer, "Layer"), labelled(head, "Head"), allLabel);
}

/** One select of every layer's heads and mean (a side-by-side card's), labelled; `choice`
 *  selected; change(choice) when another is chosen. */
export function headSelect(counts, choice, change) {
  const select = Object.assign(document.createElement("select"), { className: "heads-select" });
  for (let layer = 0; layer < counts.layers; layer += 1) {
    for (const head of [null, ...Array(counts.heads).keys()]) {
      select.append(option(`${layer}:${head ?? "mean"}`, choiceName({ layer, head }),
        layer === choice.layer && head === choice.head));
    }
  }
  select.setAttribute("aria-label", "Cross-attention layer and head");
  select.addEventListener("change", () => {
    const [layer, head] = select.value.split(":");
    change({ layer: Number(layer), head: head === "mean" ? null : Number(head) });
  });
  return select;
}

/** The choice the controls in `fieldset` say. */
export function readHeadControls(fieldset, prefix) {
  const layer = Number(fieldset.querySelector(`#${prefix}-layer`).value);
  const head = fieldset.querySelector(`#${prefix}-head`).value;
  return { layer, head: head === "mean" ? null : Number(head) };
}

/** Every layer x head of `hypothesis` (and each layer's mean), a panel each under its name,
 *  in a grid: a row per layer, each at most GRID_SCALE of its size. pick(choice) when a panel is chosen (the
 *  heatmap above then shows it whole); `chosen` is outlined. */
export function headsGrid(hypothesis, counts, chosen, pick) {
  const grid = document.createElement("div");
  grid.className = "heads-grid";
  grid.style.gridTemplateColumns = `repeat(${counts.heads + 1}, minmax(${MIN_PANEL}px, 1fr))`;
  for (let layer = 0; layer < counts.layers; layer += 1) {
    for (const head of [...Array(counts.heads).keys(), null]) {
      const choice = { layer, head };
      const panel = Object.assign(document.createElement("button"), { type: "button",
        className: "heads-panel" });
      panel.dataset.layer = String(layer);
      panel.dataset.head = head === null ? "mean" : String(head);
      panel.setAttribute("aria-pressed", String(layer === chosen.layer && head === chosen.head));
      panel.title = `Show ${choiceName(choice)}`;
      const map = heatmap({ rows: hypothesis.tokens, cols: hypothesis.source_tokens,
        weights: chosenWeights(hypothesis.heads, choice), cell: 10 });
      const name = Object.assign(document.createElement("span"),
        { className: "heads-name", textContent: choiceName(choice) });
      const svg = map.snapshot();
      svg.style.maxWidth = `${Math.round(Number(svg.getAttribute("width")) * GRID_SCALE)}px`;
      Object.assign(svg.style, { width: "100%", height: "auto" });
      panel.append(name, svg);
      panel.addEventListener("click", () => pick(choice));
      grid.append(panel);
    }
  }
  return grid;
}
