// A figure in its box, all of it in sight or saying where the rest is: drawn at its own size
// when the box is wide enough, smaller when it is not (down to MIN_SCALE of its size, where its
// labels can still be read), and past that the box scrolls sideways and a line under it says
// so (an overlay scrollbar shows nothing until it is touched).

const MIN_SCALE = 0.6;
const HINT = "Wider than this box: scroll sideways to see all of it.";

const watched = new WeakMap(); // box -> { hint, observer, frame }

/** Whether box's content is wider than box (it scrolls sideways). */
export function scrolls(box) {
  return box.scrollWidth > box.clientWidth + 1;
}

/** Show svg (with width and viewBox attributes) in box (a .scroll element with a parent),
 *  fitted as above. The svg itself is not changed (its downloads stay as drawn). */
export function fitFigure(box, svg) {
  const width = Number(svg.getAttribute("width"));
  const frame = document.createElement("div");
  frame.className = "fit";
  frame.style.maxWidth = `${width}px`;
  frame.style.minWidth = `${Math.ceil(width * MIN_SCALE)}px`;
  frame.append(svg);
  box.replaceChildren(frame);
  watch(box, frame);
}

/** Keep the line under box in step with whether box scrolls, as either changes size. */
function watch(box, frame) {
  let state = watched.get(box);
  if (!state) {
    const hint = Object.assign(document.createElement("p"),
      { className: "scroll-hint", textContent: HINT, hidden: true });
    box.after(hint);
    const check = () => { hint.hidden = !scrolls(box); };
    const observer = typeof ResizeObserver === "function" ? new ResizeObserver(check) : null;
    observer?.observe(box);
    state = { hint, observer, frame: null, check };
    watched.set(box, state);
  }
  if (state.frame) state.observer?.unobserve(state.frame);
  state.frame = frame;
  state.observer?.observe(frame);
  state.check();
}
