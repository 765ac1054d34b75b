// The Captioning tab: an image in (uploaded, dropped, or a test image by number), its caption
// out; caption-view.js draws the results, as in a notebook.

import { latest, say, sayError } from "./api.js";
import { CaptionResults } from "./caption-view.js";
import { pickRuns, runNamed, titleOf } from "./runs.js";

const $ = (id) => document.getElementById(id);
const CAPTION = "/api/caption"; // the route this tab posts to; it lists the runs that answer it

/** The tab: its form, the drop zone and the results. */
class CaptionView {
  constructor(runs) {
    this.status = $("caption-status");
    this.request = latest();
    this.runs = pickRuns($("caption-run"), runs, CAPTION, "captioning", this.status);
    this.results = new CaptionResults($("caption-results"), "caption",
      (message, kind) => say(this.status, message, kind));
    this.listen();
  }

  /** Ask for a caption (body: FormData of an upload or {run, example}); source names it. */
  async caption(body, source) {
    const run = runNamed(this.runs, $("caption-run").value);
    say(this.status, "Captioning…", "busy");
    try {
      const options = body instanceof FormData ? { form: body } : { json: body };
      const answer = await this.request(CAPTION, options);
      await this.results.show({ name: run.name, title: `${titleOf(run)}: ${answer.caption}`,
        answer, data: () => ({ run: run.name, mechanism: run.mechanism, ...answer }) });
      say(this.status, `${run.name} captioned ${source}.`);
    } catch (error) {
      if (error?.name !== "AbortError") this.results.clear();
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
}

/** The captioning tab; returns the runs it lists. */
export function initCaption(runs) {
  return new CaptionView(runs).runs;
}
