// The one colour scale of every figure: attention weight 0..1 -> white..dark blue, and its legend.

import { el, text, MUTED } from "./svg.js";

// ColorBrewer "Blues" (9 classes): sequential, readable in grey, safe for colour-blind readers.
const BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6",
  "#4292c6", "#2171b5", "#08519c", "#08306b"];
const RGB = BLUES.map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));

/** The colour of weight w (clamped to 0..1). */
export function shade(w) {
  const x = Math.min(1, Math.max(0, Number(w) || 0)) * (RGB.length - 1);
  const low = Math.floor(x);
  const high = Math.min(low + 1, RGB.length - 1);
  const t = x - low;
  const mix = RGB[low].map((c, i) => Math.round(c + (RGB[high][i] - c) * t));
  return `#${mix.map((c) => c.toString(16).padStart(2, "0")).join("")}`;
}

/** Text colour that stays legible on shade(w). */
export function inkOn(w) {
  return w > 0.5 ? "#ffffff" : "#1f2328";
}

let gradients = 0;

/** The legend: a gradient bar from 0 to 1 with ticks under `title`, drawn at (x, y); 34 px
 *  tall. */
export function legend(parent, x, y, width = 160, title = "attention weight") {
  const id = `attn-scale-${++gradients}`;
  const defs = el("defs", {}, parent);
  const gradient = el("linearGradient", { id, x1: 0, x2: 1, y1: 0, y2: 0 }, defs);
  BLUES.forEach((colour, i) => {
    el("stop", { offset: i / (BLUES.length - 1), "stop-color": colour }, gradient);
  });
  const group = el("g", { transform: `translate(${x},${y})`, class: "legend" }, parent);
  text(group, title, { x: 0, y: 10, fill: MUTED, "font-size": 11 });
  const bar = el("rect", { x: 0, y: 15, width, height: 8, fill: `url(#${id})` }, group);
  bar.setAttribute("stroke", "#d0d7de");
  [0, 0.5, 1].forEach((tick) => {
    const tx = tick * width;
    el("line", { x1: tx, x2: tx, y1: 23, y2: 26, stroke: MUTED }, group);
    const anchor = tick === 0 ? "start" : tick === 1 ? "end" : "middle";
    text(group, String(tick), { x: tx, y: 36, fill: MUTED, "font-size": 10, "text-anchor": anchor });
  });
  return group;
}
