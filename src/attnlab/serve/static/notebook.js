// The explorer's views in a notebook (attnlab.viz.notebook inlines this module with the ones it
// imports and style.css): mount(host, payload, css) draws one result inside host's shadow root
// (its styles and ids its own, so several views on a page never clash) with the same view
// classes as the page; figure(payload) is the SVG the downloads save, which Python also draws
// (to_svg) by running this code.

import { CaptionResults, captionFigure, strip } from "./caption-view.js";
import { card, compareFigure } from "./compare-view.js";
import { explanationMap, viewName } from "./explain-view.js";
import { choiceName, withChoice } from "./heads.js";
import { fillLevels } from "./levels.js";
import { readingDownload, readingFigure, readingMatrix, ReadingResults } from "./reading-view.js";
import { stack } from "./svg.js";
import { hypothesisMap, translationFigure, TranslationResults } from "./translation-view.js";

let views = 0;

function say(node, message, kind = "ok") {
  node.textContent = message;
  node.dataset.kind = kind;
}

function element(tag, className, parent, textContent) {
  const node = Object.assign(document.createElement(tag), { className });
  if (textContent !== undefined) node.textContent = textContent;
  parent?.append(node);
  return node;
}

/** The JSON download of a view: its payload without what only draws it. */
function weightsOf(payload) {
  const { veils, ...rest } = payload;
  return rest;
}

/** A translation's figure title at one level, with the note of a long input drawn smaller. */
function levelTitle(payload, level) {
  const title = `${payload.title} · ${level.name}`;
  return level.note ? `${title} · ${level.note}` : title;
}

function mountTranslation(view, payload, prefix, status) {
  const levels = payload.levels;
  const toggle = element("fieldset", "toggle", null);
  toggle.id = `${prefix}-levels`;
  view.querySelector(".nb-head").append(toggle);
  fillLevels(toggle, `${prefix}-level`, levels.map(({ value, name }) => ({ value, name })));
  if (levels.length < 2) toggle.hidden = true;
  const box = element("div", "results", view);
  box.id = `${prefix}-results`;
  const results = new TranslationResults(box, prefix, (message, kind) => say(status, message, kind));
  // an explanation's attributions, given whole: the switch draws them with no request
  const explanation = payload.explanation;
  if (explanation) results.view = payload.view;
  let choice = payload.choice ?? null; // the layer and head shown first; then the reader's
  const draw = (value) => {
    const level = levels.find((l) => l.value === value) ?? levels[0];
    say(status, level.note ?? ""); // a long input drawn smaller says so
    results.show({ name: payload.name, title: levelTitle(payload, level),
      hypotheses: level.hypotheses, data: (hypothesis) => ({ title: payload.title,
        level: level.value, hypothesis }),
      ...(explanation ? { explain: () => explanation, views: payload.attributions } : {}),
      choice });
    choice = null;
  };
  toggle.addEventListener("change", (event) => draw(event.target.value));
  draw(levels[0].value);
}

function mountCaption(view, payload, prefix, status) {
  const box = element("div", "results", view);
  const results = new CaptionResults(box, prefix, (message, kind) => say(status, message, kind));
  return results.show({ name: payload.name, title: payload.title, answer: payload.answer,
    data: () => weightsOf(payload) });
}

function mountReading(view, payload, prefix, status) {
  const box = element("div", "reading-results", view);
  const results = new ReadingResults(box, prefix, (message, kind) => say(status, message, kind));
  results.show({ name: payload.name, title: payload.title, answer: payload.answer,
    data: () => weightsOf(payload) });
}

/** Several runs' translations of one sentence side by side, under a table of their scores
 *  when there is one (a suite's results). */
function mountCompare(view, payload) {
  if (payload.table) {
    const table = element("table", "nb-table", view);
    const head = element("tr", "", element("thead", "", table));
    payload.table.columns.forEach((column) => element("th", "", head, column));
    const body = element("tbody", "", table);
    payload.table.rows.forEach((row) => {
      const line = element("tr", "", body);
      row.forEach((cell) => element("td", "", line, cell));
    });
  }
  const grid = element("div", "compare-grid", view);
  const cards = payload.entries.map(({ run, hypothesis, failure }) => card(run, hypothesis,
    failure ?? (hypothesis ? null : "No example.")));
  grid.append(...cards.map((entry) => entry.figure));
}

const MOUNT = { translation: mountTranslation, caption: mountCaption, reading: mountReading,
  compare: mountCompare };

/** Draw payload ({ kind, title, ... }) into host's shadow root; css: the page's styles. */
export function mount(host, payload, css) {
  const root = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  const prefix = `v${++views}-${payload.kind}`;
  const style = document.createElement("style");
  style.textContent = css;
  const view = element("div", `nb-view nb-${payload.kind}`, null);
  const head = element("div", "nb-head", view);
  element("strong", "nb-title", head, payload.title);
  const status = element("p", "status", view);
  status.setAttribute("role", "status");
  root.replaceChildren(style, view);
  host.dataset.ready = "false";
  const parts = payload.kind === "group" ? payload.views : [payload];
  if (payload.kind === "group") head.remove();
  const drawn = parts.map((part, index) => {
    const inner = payload.kind === "group" ? element("div", `nb-part nb-${part.kind}`, view)
      : view;
    if (payload.kind === "group") element("strong", "nb-title", element("div", "nb-head", inner),
      part.title);
    return MOUNT[part.kind](inner, part, `${prefix}-${index}`, status);
  });
  Promise.all(drawn).then(() => { host.dataset.ready = "true"; },
    (error) => say(status, error.message, "error"));
}

/** The figure each kind of view downloads, as an SVG element (veils: the caption's PNG data
 *  URLs when no canvas can draw them, as in Python); null when it has nothing to draw. */
const FIGURE = {
  translation(payload) {
    const level = payload.levels[0];
    const view = payload.view ?? "attention"; // an explanation's first view
    if (view !== "attention") {
      return translationFigure(explanationMap(payload.explanation, view),
        `${levelTitle(payload, level)} · ${viewName(view)} (|row| / max)`);
    }
    const map = hypothesisMap(withChoice(level.hypotheses[0], payload.choice));
    const heads = payload.choice ? ` · ${choiceName(payload.choice)}` : "";
    const title = `${levelTitle(payload, level)}${heads}`;
    return map && translationFigure(map, payload.explanation ? `${title} · attention` : title);
  },
  caption({ answer, veils, size, title }) {
    const image = { src: answer.image, width: size[1], height: size[0] };
    return captionFigure(strip(image, answer.tokens, veils, 6), title);
  },
  reading({ answer: { tokens, weights }, title }) {
    return readingDownload(readingFigure(tokens, weights), readingMatrix(tokens, weights), title);
  },
  compare(payload) {
    const entries = payload.entries.filter((entry) => entry.hypothesis?.attention)
      .map(({ run, hypothesis }) => ({ run, map: hypothesisMap(hypothesis, { cell: 22 }) }));
    return entries.length ? compareFigure(entries) : null;
  },
  group(payload) {
    const parts = payload.views.map(figure).filter((svg) => svg);
    return parts.length ? stack(parts.map((svg) => ({ svg })), { direction: "column" }) : null;
  },
};

/** The figure a view (payload: { kind, ... }) downloads, as an SVG element, or null. */
export function figure(payload) {
  return FIGURE[payload.kind](payload);
}
