// An attention matrix as an interactive SVG heatmap: one row per query token (a target word,
// an LSTMN step), one column per key token (a source word), each cell shaded by its weight.
// Hovering or focusing a row label tints the column labels by that row's weights (and outlines
// the row); a column label tints the row labels that looked at it.

import { inkOn, legend, shade } from "./colour.js";
import { ACCENT, el, INK, label, svgRoot, text, textWidth } from "./svg.js";

const SIZE = 12;
const SLANT = Math.SQRT1_2; // long column labels are turned 45 degrees
const HIDDEN = "#f3f4f6";   // a cell not decoded yet, or one the model cannot attend to
const FADED = "#b8bec6";
const NO_HOVER = { hoverRow: null, hoverCol: null, hoverCell: null };
const NO_FOCUS = { focusRow: null, focusCol: null };

/** The index of the largest value, skipping nulls; -1 when there is none. */
function argmax(values) {
  let best = -1;
  values?.forEach((v, i) => { if (v !== null && (best < 0 || v > values[best])) best = i; });
  return best;
}

/** Where everything goes: label widths, the grid's corner, the figure's size. */
function layout(rowText, colText, cell) {
  const rowWidths = rowText.map((s) => textWidth(s, SIZE, "bold"));
  const colWidths = colText.map((s) => textWidth(s, SIZE, "bold"));
  // labels that fit their cell stand upright (characters; the last, often "</s>", may run
  // into the margin); longer ones are turned
  const last = colText.length - 1;
  const upright = colWidths.every((w, j) => w <= (j === last ? 3 * cell : cell - 6));
  const left = Math.max(24, ...rowWidths) + 22;
  const top = upright ? 30 : Math.max(24, ...colWidths) * SLANT + 30;
  const reach = colWidths.map((w, j) => left + (j + 0.5) * cell + (upright ? w / 2 : w * SLANT));
  const width = Math.ceil(Math.max(left + colText.length * cell + 8, left + 176,
    ...reach.map((x) => x + 14)));
  const height = Math.ceil(top + rowText.length * cell + 56);
  return { rowWidths, colWidths, upright, left, top, width, height };
}

/**
 * rows, cols: token lists; weights (rows.length, cols.length), row i the distribution that
 * produced rows[i] (a shorter row counts as zeros), or any values from 0 to 1 (an
 * attribution's, row-scaled). masked(i, j): true where no weight can exist (drawn blank).
 * setStep(k) shows rows 0..k-1 only, outlining row k-1 (null: all); snapshot() is a copy
 * without hover or focus, for downloading. what: the figure's name ("Attention"); verb: what
 * a row does with its largest column ("looks most at"); tip(i, j): a cell's tooltip; scale:
 * the legend's title.
 */
class Heatmap {
  constructor({ rows, cols, weights, cell, masked, rowName, colName, what, verb, tip,
    scale }) {
    Object.assign(this, { rows, cols, weights, cell, masked, verb, tip });
    this.state = { step: null, ...NO_HOVER, ...NO_FOCUS };
    const rowText = rows.map((t) => label(t));
    const colText = cols.map((t) => label(t));
    this.box = layout(rowText, colText, cell);
    this.svg = svgRoot(this.box.width, this.box.height,
      `${what} heatmap: ${rows.length} ${rowName} tokens by ${cols.length} ${colName} tokens`);
    this.svg.classList.add("heatmap");
    this.cells = this.drawGrid();
    // every tint under every label text: a turned label's tint would cut its neighbour's
    // text; the tints (even unfilled) take the pointer, the text lets it through
    const tints = el("g", {}, this.svg);
    const texts = el("g", { "aria-hidden": "true", "pointer-events": "none" }, this.svg);
    this.rowLabels = rowText.map((s, i) => this.rowLabel(tints, texts, s, i, rowName, colName));
    this.colLabels = colText.map((s, j) => this.colLabel(tints, texts, s, j, colName));
    const outline = (stroke, dash) => el("rect", { fill: "none", stroke, "stroke-width": 2,
      "stroke-dasharray": dash, visibility: "hidden", "pointer-events": "none", rx: 2 },
    this.svg);
    this.stepOutline = outline(ACCENT);
    this.rowOutline = outline(INK);
    this.columnOutline = outline(INK, "4 3");
    legend(this.svg, this.box.left, this.box.top + rows.length * cell + 14, 160, scale);
    this.listen();
    this.drawCells();
    this.drawHighlight();
  }

  weight(i, j) {
    return Number(this.weights[i]?.[j] ?? 0);
  }

  shown(i) {
    return this.state.step === null || i < this.state.step;
  }

  drawGrid() {
    const { left, top } = this.box;
    const size = this.cell;
    return this.rows.map((row, i) => this.cols.map((col, j) => {
      const rect = el("rect", { x: left + j * size, y: top + i * size, width: size - 1,
        height: size - 1, "data-row": i, "data-col": j, class: "cell" }, this.svg);
      if (!this.masked(i, j)) {
        el("title", {}, rect).textContent = this.tip?.(i, j)
          ?? `${row} ← ${col}: ${this.weight(i, j).toFixed(3)}`;
      }
      return rect;
    }));
  }

  /** A focusable label group (its tint inside) and its text, both at transform. */
  labelParts(tints, texts, kind, index, transform, description) {
    const key = kind === "row" ? "data-row" : "data-col";
    const g = el("g", { class: `${kind}-label`, transform, tabindex: -1, "data-index": index,
      [key]: index, role: "img", "aria-label": description }, tints);
    const words = el("g", { class: `${kind}-text`, transform, [key]: index }, texts);
    return { g, words };
  }

  rowLabel(tints, texts, shownText, i, rowName, colName) {
    const y = this.box.top + (i + 0.5) * this.cell;
    const best = argmax(this.cols.map((_, j) => (this.masked(i, j) ? null : this.weight(i, j))));
    const description = `${rowName} ${i + 1} “${this.rows[i]}”`
      + (best >= 0 ? `, ${this.verb} ${colName} “${this.cols[best]}”` : "");
    const { g, words } = this.labelParts(tints, texts, "row", i,
      `translate(${this.box.left - 10},${y})`, description);
    const w = this.box.rowWidths[i];
    const tint = el("rect", { x: -w - 5, y: -9, width: w + 10, height: 18, rx: 3, fill: "none",
      class: "tint", "pointer-events": "all" }, g);
    const node = text(words, shownText, { x: 0, dy: "0.35em", "text-anchor": "end" });
    return { g, tint, node };
  }

  colLabel(tints, texts, shownText, j, colName) {
    const { left, top, upright, colWidths } = this.box;
    const x = left + (j + 0.5) * this.cell;
    const transform = upright ? `translate(${x},${top - 14})`
      : `translate(${x},${top - 10}) rotate(-45)`;
    const { g, words } = this.labelParts(tints, texts, "col", j, transform,
      `${colName} ${j + 1} “${this.cols[j]}”`);
    const wide = upright ? Math.max(this.cell - 4, colWidths[j] + 8) : colWidths[j] + 10;
    const tint = el("rect", { x: upright ? -wide / 2 : -5, y: -9, width: wide, height: 18,
      rx: 3, fill: "none", class: "tint", "pointer-events": "all" }, g);
    const node = text(words, shownText, { x: 0, dy: "0.35em",
      "text-anchor": upright ? "middle" : "start" });
    return { g, tint, node };
  }

  /** rect around the cells from (x, y), w x h pixels, shown. */
  place(rect, x, y, w, h) {
    const attrs = { x: x - 1, y: y - 1, width: w + 1, height: h + 1, visibility: "visible" };
    Object.entries(attrs).forEach(([k, v]) => rect.setAttribute(k, v));
  }

  drawCells() {
    const { left, top } = this.box;
    this.cells.forEach((row, i) => row.forEach((rect, j) => {
      const blank = this.masked(i, j) || !this.shown(i);
      rect.setAttribute("fill", blank ? HIDDEN : shade(this.weight(i, j)));
    }));
    this.rowLabels.forEach(({ g }) => g.setAttribute("tabindex", -1));
    // one tab stop for the target words (the first one drawn), one for the source words
    this.rowLabels.find((_, i) => this.shown(i))?.g.setAttribute("tabindex", 0);
    this.colLabels[0]?.g.setAttribute("tabindex", 0);
    const step = this.state.step;
    if (step) {
      this.place(this.stepOutline, left, top + (step - 1) * this.cell,
        this.cols.length * this.cell, this.cell);
    } else {
      this.stepOutline.setAttribute("visibility", "hidden");
    }
  }

  /** Tint labels by values (null: no tint), the largest marked is-top and bold. */
  tint(labels, values, plainFill) {
    const best = argmax(values);
    labels.forEach(({ g, tint, node }, k) => {
      const w = values?.[k] ?? null;
      g.classList.toggle("is-top", k === best);
      if (w === null) {
        g.removeAttribute("data-weight");
        tint.setAttribute("fill", "none");
        node.setAttribute("fill", plainFill(k));
        node.removeAttribute("font-weight");
        return;
      }
      g.setAttribute("data-weight", w.toFixed(4));
      tint.setAttribute("fill", w < 0.01 ? "none" : shade(w)); // no white box on white
      node.setAttribute("fill", inkOn(w));
      node.setAttribute("font-weight", k === best ? "bold" : "normal");
    });
  }

  drawHighlight() {
    const { hoverRow, hoverCol, hoverCell, focusRow, focusCol } = this.state;
    const row = hoverRow ?? (hoverCol === null ? focusRow : null);
    const col = row !== null ? null : hoverCol ?? focusCol;
    // a row tints the column labels; a column tints the row labels drawn so far
    this.tint(this.colLabels, row === null ? null
      : this.cols.map((_, j) => (this.masked(row, j) ? null : this.weight(row, j))),
    () => INK);
    this.tint(this.rowLabels, col === null ? null
      : this.rows.map((_, i) => (this.masked(i, col) || !this.shown(i) ? null
        : this.weight(i, col))),
    (i) => (this.shown(i) ? INK : FADED));
    const { left, top } = this.box;
    const [across, down] = [this.cols.length * this.cell, this.rows.length * this.cell];
    if (row !== null) this.place(this.rowOutline, left, top + row * this.cell, across, this.cell);
    else this.rowOutline.setAttribute("visibility", "hidden");
    const outlined = hoverCell ?? col;
    if (outlined !== null) {
      this.place(this.columnOutline, left + outlined * this.cell, top, this.cell, down);
    } else {
      this.columnOutline.setAttribute("visibility", "hidden");
    }
  }

  /** The row and column an event's target stands for (a cell: its row, its column outlined). */
  pointedAt(target) {
    const node = target.closest?.("[data-row], [data-col]");
    const i = node?.dataset.row === undefined ? null : Number(node.dataset.row);
    const j = node?.dataset.col === undefined ? null : Number(node.dataset.col);
    if (i !== null && !this.shown(i)) return NO_HOVER;
    if (node?.classList.contains("cell")) return { hoverRow: i, hoverCol: null, hoverCell: j };
    return { hoverRow: i, hoverCol: j, hoverCell: null };
  }

  update(change) {
    Object.assign(this.state, change);
    this.drawHighlight();
  }

  listen() {
    this.svg.addEventListener("pointerover", (event) => this.update(this.pointedAt(event.target)));
    this.svg.addEventListener("pointerleave", () => this.update(NO_HOVER));
    this.svg.addEventListener("focusin", (event) => {
      const { hoverRow, hoverCol } = this.pointedAt(event.target);
      this.update({ focusRow: hoverRow, focusCol: hoverCol });
    });
    this.svg.addEventListener("focusout", () => this.update(NO_FOCUS));
    this.svg.addEventListener("keydown", (event) => this.move(event));
  }

  /** Arrow keys between labels: up and down the target words drawn, left and right the
   *  source words; Home and End to either end. */
  move(event) {
    const node = event.target.closest?.(".row-label, .col-label");
    if (!node) return;
    const isRow = node.classList.contains("row-label");
    const labels = isRow ? this.rowLabels.filter((_, k) => this.shown(k)) : this.colLabels;
    const at = labels.findIndex(({ g }) => g === node);
    const keys = isRow ? { ArrowUp: at - 1, ArrowDown: at + 1 }
      : { ArrowLeft: at - 1, ArrowRight: at + 1 };
    Object.assign(keys, { Home: 0, End: labels.length - 1 });
    if (!(event.key in keys)) return;
    event.preventDefault();
    const next = labels[Math.min(labels.length - 1, Math.max(0, keys[event.key]))];
    labels.forEach(({ g }) => g.setAttribute("tabindex", -1));
    next.g.setAttribute("tabindex", 0);
    next.g.focus();
  }

  setStep(k) {
    this.state.step = k;
    this.drawCells();
    this.drawHighlight();
  }

  snapshot() {
    const saved = { ...this.state };
    this.update({ ...NO_HOVER, ...NO_FOCUS });
    const copy = this.svg.cloneNode(true);
    this.update(saved);
    return copy;
  }
}

/** A Heatmap (see the class); cell: pixels per cell, smaller for long sources. */
export function heatmap({ rows, cols, weights, cell = cols.length > 24 ? 22 : 28,
  masked = () => false, rowName = "target", colName = "source", what = "Attention",
  verb = "looks most at", tip = null, scale = "attention weight" }) {
  return new Heatmap({ rows, cols, weights, cell, masked, rowName, colName, what, verb, tip,
    scale });
}
