// The run pickers: each tab lists the loaded runs that answer the route it posts to (a run's
// `endpoint`, declared by its task), so no tab knows a task by name.

import { say } from "./api.js";

/** The runs that answer endpoint (e.g. "/api/translate"). */
export function runsAnswering(runs, endpoint) {
  return runs.filter((run) => run.endpoint === endpoint);
}

/** Fill select with the runs that answer endpoint ("name (mechanism)"); returns those runs.
 *  When there is none, the form is disabled and status says how to load one (kind: what the
 *  tab's runs do, e.g. "translation"). */
export function pickRuns(select, runs, endpoint, kind, status) {
  const mine = runsAnswering(runs, endpoint);
  select.replaceChildren(...mine.map((run) => {
    const option = document.createElement("option");
    option.value = run.name;
    option.textContent = run.mechanism ? `${run.name} (${run.mechanism})` : run.name;
    return option;
  }));
  if (!mine.length) {
    for (const control of select.form.elements) control.disabled = true;
    say(status, `No ${kind} run is loaded: start attnlab serve with --run DIR of one.`,
      "error");
  }
  return mine;
}

/** Keep paragraph saying what the run chosen in select is (its `about`: the model and what it
 *  was trained on, e.g. the dates task's years). */
export function describeChoice(select, runs, paragraph) {
  const show = () => { paragraph.textContent = runNamed(runs, select.value).about || ""; };
  select.addEventListener("change", show);
  show();
}

/** The run named name among runs (or a stand-in when the list changed under us). */
export function runNamed(runs, name) {
  return runs.find((run) => run.name === name) ?? { name, mechanism: "", endpoint: "", config: {} };
}

/** "name · mechanism", the title of a figure. */
export function titleOf(run) {
  return run.mechanism ? `${run.name} · ${run.mechanism}` : run.name;
}
