// SVG drawing helpers shared by every figure: elements, text measuring, labels, stacking.

export const SVG_NS = "http://www.w3.org/2000/svg";
export const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif';
export const INK = "#1f2328";
export const MUTED = "#6b7280";
export const ACCENT = "#c2410c"; // outlines and the current word: orange against the blue scale

/** A new SVG element with attributes, appended to parent when given. */
export function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  if (parent) parent.appendChild(node);
  return node;
}

/** A <text> element holding str. */
export function text(parent, str, attrs = {}) {
  const node = el("text", { "font-family": FONT, "font-size": 12, fill: INK, ...attrs }, parent);
  node.textContent = str;
  return node;
}

/** A root <svg> of the given size that exports on its own (xmlns, white background). */
export function svgRoot(width, height, label) {
  const svg = el("svg", {
    xmlns: SVG_NS, width, height, viewBox: `0 0 ${width} ${height}`,
    role: "group", "aria-label": label,
  });
  el("rect", { width, height, fill: "#ffffff" }, svg);
  return svg;
}

let measure = null;

/** Width in pixels of str drawn in the figure font. */
export function textWidth(str, size = 12, weight = "normal") {
  measure ??= document.createElement("canvas").getContext("2d");
  measure.font = `${weight} ${size}px ${FONT}`;
  return measure.measureText(str).width;
}

/** A token as a label: a space (a character model's) and a bare word-boundary piece
 *  (sentencepiece's "▁") both "␣", other whitespace "·", the empty token "∅"; long tokens cut
 *  with an ellipsis. attnlab.viz.token_label is the same rule for the figures drawn in Python. */
export function label(token, max = 18) {
  let shown = String(token);
  if (shown === "") shown = "∅";
  else if (shown.replace(/▁/g, "").trim() === "") {
    shown = shown.replace(/[ ▁]/g, "␣").replace(/\s/g, "·");
  }
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
}

/** Tokens joined back into text: pieces by their "▁" word marks, characters as they are,
 *  words with spaces; which of the three is decided on `like` (all the tokens), so a prefix
 *  joins the same way as the whole. */
export function joinTokens(tokens, like = tokens) {
  if (like.some((t) => t.startsWith("▁"))) return tokens.join("").replace(/▁/g, " ").trim();
  if (like.filter((t) => t !== "</s>").every((t) => [...t].length <= 1)) return tokens.join("");
  return tokens.join(" ");
}

/** Several figures in one exportable SVG, side by side (or stacked), each under its title. */
export function stack(parts, { direction = "row", gap = 24 } = {}) {
  const titleHeight = parts.some((p) => p.title) ? 22 : 0;
  const sizes = parts.map((p) => ({
    width: Number(p.svg.getAttribute("width")), height: Number(p.svg.getAttribute("height")),
  }));
  const row = direction === "row";
  const width = row
    ? sizes.reduce((sum, s) => sum + s.width, 0) + gap * (parts.length - 1)
    : Math.max(...sizes.map((s) => s.width));
  const height = row
    ? Math.max(...sizes.map((s) => s.height)) + titleHeight
    : sizes.reduce((sum, s) => sum + s.height + titleHeight, 0) + gap * (parts.length - 1);
  const root = svgRoot(Math.ceil(width), Math.ceil(height), "attention figure");
  let offset = 0;
  parts.forEach((part, index) => {
    const x = row ? offset : 0;
    const y = row ? 0 : offset;
    if (part.title) {
      text(root, part.title, { x: x + 4, y: y + 15, "font-weight": 600, "font-size": 13 });
    }
    const inner = part.svg.cloneNode(true);
    inner.setAttribute("x", x);
    inner.setAttribute("y", y + titleHeight);
    inner.removeAttribute("xmlns");
    root.appendChild(inner);
    offset += (row ? sizes[index].width : sizes[index].height + titleHeight) + gap;
  });
  return root;
}
