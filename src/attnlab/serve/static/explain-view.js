// The view switch of a translation's heatmap: its attention, or one of three attributions of
// the same output (attnlab.explain: gradient x input, integrated gradients, erasure), drawn on
// the same grid. An attribution is signed; the heatmap shows each row's magnitudes over the
// row's largest, so 1 marks the source piece that mattered most to that output piece.

import { ApiError } from "./api.js";
import { heatmap } from "./heatmap.js";

export const VIEWS = [
  { value: "attention", name: "attention" },
  { value: "gradient", name: "gradient × input" },
  { value: "integrated_gradients", name: "integrated gradients" },
  { value: "erasure", name: "erasure" },
];

/** A view's name as the switch shows it. */
export function viewName(value) {
  return VIEWS.find((view) => view.value === value)?.name ?? value;
}

/** The caption under an attribution's heatmap (the attention has the figure's own). */
export function viewCaption(value) {
  if (value === "attention") return "";
  const name = viewName(value);
  return `${name[0].toUpperCase()}${name.slice(1)} of the same output, measured on the model:
    each row is |value| over the row's largest, so 1 marks the source piece that mattered most
    to that output piece (hover a cell for its signed value; the JSON download has them all).
    Over the model's own pieces.`.replace(/\s+/g, " ");
}

/** |values| with each row over its largest magnitude (a row of zeros, or nulls, stays 0). */
export function rowScaled(values) {
  return values.map((row) => {
    const magnitudes = row.map((v) => Math.abs(Number(v ?? 0)) || 0);
    const peak = Math.max(0, ...magnitudes);
    return magnitudes.map((m) => (peak > 0 ? m / peak : 0));
  });
}

/** Fill `fieldset` with a radio per view (group `name`) under the legend "Show": the views in
 *  `available` enabled, `chosen` checked. */
export function fillViews(fieldset, name, available, chosen) {
  const legend = Object.assign(document.createElement("legend"), { textContent: "Show" });
  fieldset.replaceChildren(legend, ...VIEWS.map(({ value, name: shown }) => {
    const labelNode = document.createElement("label");
    const radio = Object.assign(document.createElement("input"), { type: "radio", name, value,
      checked: value === chosen, disabled: !available.includes(value) });
    labelNode.append(radio, ` ${shown}`);
    return labelNode;
  }));
}

/** The heatmap of attribution `view` (not "attention") of an explanation ({ source_pieces, target_pieces,
 *  views }, as POST /api/explain answers); throws a sentence when it does not fit. */
export function explanationMap(explanation, view, options = {}) {
  const { source_pieces: cols, target_pieces: rows } = explanation;
  const values = explanation.views?.[view];
  const fits = Array.isArray(values) && values.length === rows.length
    && values.every((row) => row.length === cols.length);
  if (!fits) throw new ApiError(`The server's ${viewName(view)} does not match its pieces.`);
  const signed = (v) => (v === null ? "not a number" : Number(v).toPrecision(3));
  const weights = rowScaled(values);
  return heatmap({ rows, cols, weights, what: viewName(view), verb: "relies most on",
    scale: "|value| / the row's largest",
    tip: (i, j) => `${rows[i]} ← ${cols[j]}: ${weights[i][j].toFixed(3)} of the row's largest `
      + `(${signed(values[i][j])})`, ...options });
}
