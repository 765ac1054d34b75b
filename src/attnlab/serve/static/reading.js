// The LSTMN tab: a sentence in, how the language model read it out (reading-view.js draws it,
// as in a notebook).

import { latest, say, sayError } from "./api.js";
import { pickRuns, runNamed, titleOf } from "./runs.js";
import { ReadingResults } from "./reading-view.js";

const $ = (id) => document.getElementById(id);
const READ = "/api/read"; // the route this tab posts to; it lists the runs that answer it

/** The LSTMN tab; returns the runs it lists. */
export function initReading(runs) {
  const form = $("read-form");
  const status = $("read-status");
  const request = latest();
  const mine = pickRuns($("read-run"), runs, READ, "language-model (LSTMN)", status);
  const results = new ReadingResults($("read-results"), "read",
    (message, kind) => say(status, message, kind));

  async function read() {
    const run = runNamed(mine, $("read-run").value);
    say(status, "Reading…", "busy");
    try {
      const answer = await request(READ, { json: { run: run.name,
        text: $("read-text").value } });
      results.show({ name: run.name, title: titleOf(run), answer,
        data: () => ({ run: run.name, mechanism: run.mechanism, ...answer }) });
      say(status, `${run.name} read ${answer.tokens.length} tokens, one step each.`);
    } catch (error) {
      if (error?.name !== "AbortError") results.clear();
      sayError(status, error);
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    read();
  });
  return mine;
}
