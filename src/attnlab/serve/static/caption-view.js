// A caption's results, drawn the same on the explorer page and in a notebook: each word's
// attention over the image grid, upsampled smoothly and laid over the image (Xu et al. 2015,
// Fig. 2), and an "all words" strip of small multiples. Ids inside are `${prefix}-...`.

import { ApiError } from "./api.js";
import { downloadBar } from "./download.js";
import { el, label, stack, svgRoot, text } from "./svg.js";

const VEIL = 0.72;  // how dark the places the word did not look at become
const PANEL = 96;   // the longer side of an image in the strip
const LOOK_HINT = "Hover, focus or click a word to see where the model looked while writing it.";

/** A canvas of width x height: the grid (H, W) of weights upsampled smoothly, as a dark veil
 *  over what was not attended (each word scaled to its own maximum). */
export function veil(row, [rows, cols], width, height) {
  const small = Object.assign(document.createElement("canvas"), { width: cols, height: rows });
  const pixels = small.getContext("2d").createImageData(cols, rows);
  const max = Math.max(...row) || 1;
  row.forEach((weight, k) => { pixels.data[4 * k + 3] = Math.round(255 * VEIL * (1 - weight / max)); });
  small.getContext("2d").putImageData(pixels, 0, 0);
  const big = Object.assign(document.createElement("canvas"),
    { width: Math.max(1, Math.round(width)), height: Math.max(1, Math.round(height)) });
  const context = big.getContext("2d");
  context.imageSmoothingEnabled = true;
  context.imageSmoothingQuality = "high";
  context.drawImage(small, 0, 0, big.width, big.height);
  return big;
}

/** The veils of every word as PNG data URLs, drawn at twice the strip's size (sharp on any
 *  screen). */
export function veils(answer) {
  const side = 2 * PANEL;
  return answer.attention.map((row) => veil(row, answer.grid, side, side).toDataURL("image/png"));
}

/** Throws a sentence when the attention does not fit its grid. */
export function checkCaption(answer) {
  const [rows, cols] = answer.grid ?? [];
  const fits = answer.attention?.length === answer.tokens?.length
    && answer.attention.every((row) => row.length === rows * cols);
  if (!fits) throw new ApiError("The attention sent by the server does not match its grid.");
}

/** The strip: the image ({ src, width, height }: its natural size), then one panel per word
 *  with its attention veil (veils: PNG data URLs), wrapped after `columns` panels. */
export function strip(image, tokens, veilUrls, columns) {
  const scale = PANEL / Math.max(image.width, image.height);
  const w = Math.round(image.width * scale);
  const h = Math.round(image.height * scale);
  const gap = 10;
  const panels = tokens.length + 1;
  const across = Math.max(1, Math.min(columns, panels));
  const rows = Math.ceil(panels / across);
  const svg = svgRoot(across * (w + gap) + gap, rows * (h + 28) + gap,
    `The image and, for each of the ${tokens.length} words, where the model looked`);
  const small = image.width < 160; // keep a tiny image's pixels sharp
  ["image", ...tokens].forEach((token, k) => {
    const x = gap + (k % across) * (w + gap);
    const y = gap + Math.floor(k / across) * (h + 28);
    const g = el("g", { "data-word": k - 1 }, svg);
    el("image", { href: image.src, x, y, width: w, height: h, preserveAspectRatio: "none",
      style: small ? "image-rendering: pixelated" : null }, g);
    if (k > 0) {
      el("image", { href: veilUrls[k - 1], x, y, width: w, height: h,
        preserveAspectRatio: "none", class: "veil" }, g);
    }
    text(g, label(token, 14), { x: x + w / 2, y: y + h + 16, "text-anchor": "middle",
      "font-weight": k > 0 ? 600 : 400, fill: k > 0 ? "#1f2328" : "#6b7280" });
  });
  return svg;
}

/** The figure the downloads save: the strip under its title. */
export function captionFigure(stripSvg, title) {
  return stack([{ svg: stripSvg, title }]);
}

/** How many strip panels fit across box. */
function columnsIn(box) {
  return Math.max(1, Math.floor((box.clientWidth - 10) / (PANEL + 10)));
}

function markup(p) {
  return `
    <div class="side">
      <div class="stage">
        <img id="${p}-image" alt="The image being captioned">
        <canvas id="${p}-overlay" aria-hidden="true"></canvas>
      </div>
      <p id="${p}-looking" class="hint looking-hint" aria-live="polite"></p>
    </div>
    <div class="caption-main">
      <h2 id="${p}-heading">Caption</h2>
      <p id="${p}-words" class="caption-words"></p>
      <figure class="figure">
        <div id="${p}-strip" class="scroll caption-strip"></div>
        <figcaption>All words: each word with its attention over the image.</figcaption>
        <div id="${p}-downloads" class="downloads" role="group" aria-label="Download the figure">
          <span>Download</span>
          <button type="button" data-format="svg">SVG</button>
          <button type="button" data-format="png">PNG</button>
          <button type="button" data-format="json">Weights (JSON)</button>
        </div>
      </figure>
    </div>`;
}

/**
 * The results in `box` (a .results element, filled here). show({ name, title, answer, data })
 * draws a caption (answer: { caption, tokens, attention, grid, image }); report(message, kind)
 * hears of a problem.
 */
export class CaptionResults {
  constructor(box, prefix, report) {
    this.box = box;
    this.prefix = prefix;
    box.innerHTML = markup(prefix);
    this.image = this.part("image");
    this.overlay = this.part("overlay");
    this.words = this.part("words");
    this.shown = null; // { name, title, answer, veils, columns, strip, pinned, data }
    this.updateDownloads = downloadBar(this.part("downloads"), () => this.figure(),
      (message) => report(message, "error"));
    this.listen();
  }

  part(name) {
    return this.box.querySelector(`#${this.prefix}-${name}`);
  }

  figure() {
    const shown = this.shown;
    return shown && {
      run: shown.name,
      svg: () => captionFigure(shown.strip, shown.title),
      data: () => shown.data(),
    };
  }

  /** Lay word `index`'s attention over the image (null: the plain image). */
  look(index) {
    const { overlay, image } = this;
    const context = overlay.getContext("2d");
    const ratio = window.devicePixelRatio || 1;
    overlay.width = Math.round(image.clientWidth * ratio);
    overlay.height = Math.round(image.clientHeight * ratio);
    context.clearRect(0, 0, overlay.width, overlay.height);
    this.words.querySelectorAll("button").forEach((button) => {
      button.classList.toggle("looking", Number(button.dataset.index) === index);
    });
    if (index === null || !this.shown) {
      delete overlay.dataset.word;
      this.part("looking").textContent = LOOK_HINT;
      return;
    }
    const { attention, grid, tokens } = this.shown.answer;
    context.drawImage(veil(attention[index], grid, overlay.width, overlay.height), 0, 0);
    overlay.dataset.word = String(index);
    this.part("looking").textContent =
      `Where it looked while writing “${tokens[index]}”: brighter = more attention.`;
  }

  /** The strip again when the number of panels that fit across has changed. */
  layOut() {
    const box = this.part("strip");
    if (!this.shown || box.clientWidth === 0) return;
    const columns = columnsIn(box);
    if (columns === this.shown.columns) return;
    this.shown.columns = columns;
    const { naturalWidth: width, naturalHeight: height, src } = this.image;
    this.shown.strip = strip({ src, width, height }, this.shown.answer.tokens, this.shown.veils,
      columns);
    box.replaceChildren(this.shown.strip);
  }

  async show({ name, title, answer, data }) {
    checkCaption(answer);
    this.image.src = answer.image;
    await this.image.decode().catch(() => {
      throw new ApiError("The image sent by the server could not be shown.");
    });
    this.image.classList.toggle("small", this.image.naturalWidth < 160);
    this.shown = { name, title, answer, data, veils: veils(answer), columns: null, strip: null,
      pinned: null };
    this.words.replaceChildren(...answer.tokens.map((token, index) => {
      const button = Object.assign(document.createElement("button"),
        { type: "button", className: "word", textContent: label(token) });
      button.dataset.index = String(index);
      button.setAttribute("aria-pressed", "false");
      return button;
    }));
    this.box.hidden = false;
    this.layOut();
    this.look(null);
    this.updateDownloads();
  }

  clear() {
    this.box.hidden = true;
    this.shown = null;
    this.updateDownloads();
  }

  listen() {
    // on a window resize only: a ResizeObserver would swing when the page's scroll bar comes
    // and goes with the strip's height
    let pending = null;
    window.addEventListener("resize", () => {
      clearTimeout(pending);
      pending = setTimeout(() => this.layOut(), 150);
    });
    this.listenToWords();
  }

  /** Hover or focus a word (or a strip panel) to look; a click pins the word's overlay. */
  listenToWords() {
    const indexOf = (event) => {
      const node = event.target.closest?.("[data-index], [data-word]");
      const value = node?.dataset.index ?? node?.dataset.word;
      return value === undefined || Number(value) < 0 ? null : Number(value);
    };
    const settle = () => this.look(this.shown?.pinned ?? null);
    for (const area of [this.words, this.part("strip")]) {
      area.addEventListener("pointerover", (event) => this.look(indexOf(event)
        ?? this.shown?.pinned ?? null));
      area.addEventListener("pointerleave", settle);
    }
    this.words.addEventListener("focusin", (event) => this.look(indexOf(event)));
    this.words.addEventListener("focusout", settle);
    this.words.addEventListener("click", (event) => {
      const index = indexOf(event);
      if (index === null || !this.shown) return;
      this.shown.pinned = this.shown.pinned === index ? null : index;
      this.words.querySelectorAll("button").forEach((button) => button.setAttribute(
        "aria-pressed", String(Number(button.dataset.index) === this.shown.pinned)));
      this.look(index);
    });
  }
}
