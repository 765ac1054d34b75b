// The Captioning tab: an image in (uploaded, dropped, or a test image by number), its caption
// out; each word's attention over the image grid, upsampled smoothly and laid over the image
// (Xu et al. 2015, Fig. 2), and an "all words" strip of small multiples.

import { ApiError, latest, say, sayError } from "./api.js";
import { downloadBar } from "./download.js";
import { pickRuns, runNamed, titleOf } from "./runs.js";
import { el, label, stack, svgRoot, text } from "./svg.js";

const $ = (id) => document.getElementById(id);
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

function check(answer) {
  const [rows, cols] = answer.grid ?? [];
  const fits = answer.attention?.length === answer.tokens?.length
    && answer.attention.every((row) => row.length === rows * cols);
  if (!fits) throw new ApiError("The attention sent by the server does not match its grid.");
}

/** The strip: the image, then one panel per word with its attention veil (veils: PNG data
 *  URLs), wrapped after `columns` panels. */
function strip(image, tokens, veils, columns) {
  const scale = PANEL / Math.max(image.naturalWidth, image.naturalHeight);
  const w = Math.round(image.naturalWidth * scale);
  const h = Math.round(image.naturalHeight * scale);
  const gap = 10;
  const panels = tokens.length + 1;
  const across = Math.max(1, Math.min(columns, panels));
  const rows = Math.ceil(panels / across);
  const svg = svgRoot(across * (w + gap) + gap, rows * (h + 28) + gap,
    `The image and, for each of the ${tokens.length} words, where the model looked`);
  ["image", ...tokens].forEach((token, k) => {
    const x = gap + (k % across) * (w + gap);
    const y = gap + Math.floor(k / across) * (h + 28);
    const g = el("g", { "data-word": k - 1 }, svg);
    el("image", { href: image.src, x, y, width: w, height: h, preserveAspectRatio: "none",
      style: image.classList.contains("small") ? "image-rendering: pixelated" : null }, g);
    if (k > 0) {
      el("image", { href: veils[k - 1], x, y, width: w, height: h,
        preserveAspectRatio: "none", class: "veil" }, g);
    }
    text(g, label(token, 14), { x: x + w / 2, y: y + h + 16, "text-anchor": "middle",
      "font-weight": k > 0 ? 600 : 400, fill: k > 0 ? "#1f2328" : "#6b7280" });
  });
  return svg;
}

/** How many strip panels fit across box. */
function columnsIn(box) {
  return Math.max(1, Math.floor((box.clientWidth - 10) / (PANEL + 10)));
}

/** The tab: its form, the image with its overlay, the words, the strip and the downloads. */
class CaptionView {
  constructor(runs) {
    this.status = $("caption-status");
    this.image = $("caption-image");
    this.overlay = $("caption-overlay");
    this.words = $("caption-words");
    this.request = latest();
    this.runs = pickRuns($("caption-run"), runs, "captioning", this.status);
    this.shown = null; // { run, answer, veils, columns, strip, pinned }
    this.updateDownloads = downloadBar($("caption-downloads"), () => this.figure(),
      (message) => say(this.status, message, "error"));
    this.listen();
  }

  figure() {
    const shown = this.shown;
    return shown && {
      run: shown.run.name,
      svg: () => stack([{ svg: shown.strip,
        title: `${titleOf(shown.run)}: ${shown.answer.caption}` }]),
      data: () => ({ run: shown.run.name, mechanism: shown.run.mechanism, ...shown.answer }),
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
      $("caption-looking").textContent = LOOK_HINT;
      return;
    }
    const { attention, grid, tokens } = this.shown.answer;
    context.drawImage(veil(attention[index], grid, overlay.width, overlay.height), 0, 0);
    overlay.dataset.word = String(index);
    $("caption-looking").textContent =
      `Where it looked while writing “${tokens[index]}”: brighter = more attention.`;
  }

  /** The strip again when the number of panels that fit across has changed. */
  layOut() {
    const box = $("caption-strip");
    if (!this.shown || box.clientWidth === 0) return;
    const columns = columnsIn(box);
    if (columns === this.shown.columns) return;
    this.shown.columns = columns;
    this.shown.strip = strip(this.image, this.shown.answer.tokens, this.shown.veils, columns);
    box.replaceChildren(this.shown.strip);
  }

  async show(answer, run, source) {
    check(answer);
    this.image.src = answer.image;
    await this.image.decode().catch(() => {
      throw new ApiError("The image sent by the server could not be shown.");
    });
    // keep a tiny image's pixels sharp
    this.image.classList.toggle("small", this.image.naturalWidth < 160);
    const side = 2 * PANEL; // veils drawn at twice the strip's size: sharp on any screen
    const veils = answer.attention.map((row) => veil(row, answer.grid, side, side)
      .toDataURL("image/png"));
    this.shown = { run, answer, veils, columns: null, strip: null, pinned: null };
    this.words.replaceChildren(...answer.tokens.map((token, index) => {
      const button = Object.assign(document.createElement("button"),
        { type: "button", className: "word", textContent: label(token) });
      button.dataset.index = String(index);
      button.setAttribute("aria-pressed", "false");
      return button;
    }));
    $("caption-results").hidden = false;
    this.layOut();
    this.look(null);
    this.updateDownloads();
    say(this.status, `${run.name} captioned ${source}.`);
  }

  /** Ask for a caption (body: FormData of an upload or {run, example}); source names it. */
  async caption(body, source) {
    const run = runNamed(this.runs, $("caption-run").value);
    say(this.status, "Captioning…", "busy");
    try {
      const options = body instanceof FormData ? { form: body } : { json: body };
      await this.show(await this.request("/api/caption", options), run, source);
    } catch (error) {
      if (error?.name !== "AbortError") {
        $("caption-results").hidden = true;
        this.shown = null;
        this.updateDownloads();
      }
      sayError(this.status, error);
    }
  }

  upload(file) {
    if (!file || !this.runs.length) return;
    if (file.type && !file.type.startsWith("image/")) {
      say(this.status, `${file.name} is not an image; choose a PNG or JPEG file.`, "error");
      return;
    }
    const body = new FormData();
    body.append("run", $("caption-run").value);
    body.append("image", file, file.name);
    this.caption(body, file.name);
  }

  listen() {
    $("caption-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const example = Number($("caption-example").value);
      this.caption({ run: $("caption-run").value, example }, `test image ${example}`);
    });
    $("caption-file").addEventListener("change", (event) => this.upload(event.target.files[0]));
    this.listenForDrops($("panel-caption"), $("caption-drop"));
    // on a window resize only: a ResizeObserver would swing when the page's scroll bar comes
    // and goes with the strip's height
    let pending = null;
    window.addEventListener("resize", () => {
      clearTimeout(pending);
      pending = setTimeout(() => this.layOut(), 150);
    });
    this.listenToWords();
  }

  /** An image dropped anywhere on the tab is uploaded; the drop zone lights up meanwhile. */
  listenForDrops(panel, zone) {
    panel.addEventListener("dragover", (event) => {
      event.preventDefault();
      zone.classList.add("dragging");
    });
    panel.addEventListener("dragleave", (event) => {
      if (!panel.contains(event.relatedTarget)) zone.classList.remove("dragging");
    });
    panel.addEventListener("drop", (event) => {
      event.preventDefault();
      zone.classList.remove("dragging");
      this.upload(event.dataTransfer.files[0]);
    });
  }

  /** Hover or focus a word (or a strip panel) to look; a click pins the word's overlay. */
  listenToWords() {
    const indexOf = (event) => {
      const node = event.target.closest?.("[data-index], [data-word]");
      const value = node?.dataset.index ?? node?.dataset.word;
      return value === undefined || Number(value) < 0 ? null : Number(value);
    };
    const settle = () => this.look(this.shown?.pinned ?? null);
    for (const area of [this.words, $("caption-strip")]) {
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

export function initCaption(runs) {
  return new CaptionView(runs);
}
