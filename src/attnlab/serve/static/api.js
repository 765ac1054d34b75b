// Talking to `attnlab serve`: every failure becomes one sentence for the status area.

export class ApiError extends Error {}

function detailOf(body, response) {
  const detail = body?.detail;
  if (typeof detail === "string" && detail.trim()) return detail.trim();
  // FastAPI's own validation errors are a list; say the first one as a sentence
  if (Array.isArray(detail) && detail.length) {
    const first = detail[0];
    const where = (first.loc ?? []).filter((part) => part !== "body").join(".");
    const message = String(first.msg ?? "is not valid").replace(/\.$/, "");
    return where ? `${where}: ${message}.` : `${message}.`;
  }
  const reason = response.statusText ? ` (${response.statusText})` : "";
  return `The server answered ${response.status}${reason} without saying why.`;
}

/**
 * GET path, or POST json (an object) or form (a FormData). Resolves to the JSON answer; rejects
 * with an ApiError whose message is one sentence, or with the AbortError of signal.
 */
export async function api(path, { json, form, signal } = {}) {
  const post = json !== undefined || form !== undefined;
  let response;
  try {
    response = await fetch(path, {
      method: post ? "POST" : "GET",
      headers: json !== undefined ? { "Content-Type": "application/json" } : undefined,
      body: json !== undefined ? JSON.stringify(json) : form,
      signal,
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError("The server did not answer; is attnlab serve still running?");
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) throw new ApiError(detailOf(body, response));
  if (body === null) throw new ApiError("The server's answer was not JSON.");
  return body;
}

/**
 * One request at a time per caller: starting a new one aborts the previous, so a slow old
 * answer never overwrites a newer one. Returns request(path, options) -> Promise.
 */
export function latest() {
  let controller = null;
  return (path, options = {}) => {
    controller?.abort();
    controller = new AbortController();
    return api(path, { ...options, signal: controller.signal });
  };
}

/** Show message in an aria-live status element; kind "error" | "busy" | "ok". */
export function say(node, message, kind = "ok") {
  node.textContent = message;
  node.dataset.kind = kind;
}

/** say() for a failed request: an aborted one is silent (a newer request replaced it). */
export function sayError(node, error) {
  if (error?.name === "AbortError") return;
  say(node, error instanceof ApiError ? error.message
    : "Something went wrong in the page; reload it and try again.", "error");
  if (!(error instanceof ApiError)) console.error(error);
}

/** An error in status is cleared by the next thing done in form (typing, choosing, sending,
 *  or a value the browser itself refuses), so an old error never stands beside a new one. */
export function clearErrorsOn(form, status) {
  const clear = () => {
    if (status.dataset.kind === "error") say(status, "");
  };
  // capturing: "invalid" does not bubble, and a tab's own handlers then say what is new
  for (const type of ["input", "change", "submit", "invalid"]) {
    form.addEventListener(type, clear, true);
  }
}
