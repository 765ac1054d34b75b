"""The explorer's requests, checked against the limits and handed to the micro-batcher: each
task's endpoint (its Run's request, settled and answered by the Run), and explain (attention
beside the attributions of one output, within a time budget).

Every check that can refuse runs before a request joins the queue, so the worker only sees
work it can do; a full queue is a 503 with Retry-After.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable, Hashable
from typing import Any

from starlette.concurrency import run_in_threadpool

from attnlab.errors import UserError
from attnlab.recipes import RECIPES, Recipe
from attnlab.train.capabilities import Explains
from attnlab.train.trained import Upload, number

from .batching import MicroBatcher, QueueFull
from .bodies import parse_json, parse_multipart
from .images import open_upload
from .limits import Limits
from .problems import RequestError, invalid, quoted, too_large
from .runs import ServedRun
from .schemas import ExplainRequest
from .work import answer_batch, explain_batch

RETRY_AFTER_S = 1
# Texts up to this many characters are tokenised on the event loop (about a millisecond); a
# longer one (up to the body cap) goes to a thread, so it cannot stall the other requests.
INLINE_CHARS = 20_000


class Service:
    """The loaded runs, the limits and the one worker that runs every model."""

    def __init__(self, runs: dict[str, ServedRun], limits: Limits):
        self.runs, self.limits = runs, limits
        self.batcher = MicroBatcher(queue_size=limits.queue_size,
                                    window_s=limits.batch_window_ms / 1000,
                                    max_batch=limits.max_batch)

    def run(self, name: str, recipe: Recipe) -> ServedRun:
        """The run called `name`: 404 when there is none, 422 when it is another task's."""
        if name not in self.runs:
            raise RequestError(404, f"unknown run {quoted(name)}; runs: {', '.join(self.runs)}")
        run = self.runs[name]
        if not isinstance(run.loaded, recipe.run_class):
            other = RECIPES[run.task]
            raise invalid(f"run {name} is a {other.title} run; use {other.endpoint}")
        return run

    async def answer(self, recipe: Recipe, body: bytes, content_type: str) -> dict:
        """A request of a task's endpoint (its Run's request in JSON, or an upload where the
        Run takes one), checked against the limits, settled by the Run (a UserError is a
        422), then answered in a batch of its Run's batch key."""
        request, run = self._parse(recipe, body, content_type)
        # the limits hold for these fields wherever a Run's request declares them: a search's
        # width, a text
        fields = {name: getattr(request, name) for name in type(request).model_fields}
        limit = self.limits.max_beam
        for name in ("beam", "nbest"):
            value = fields.get(name)
            if value is not None and not 1 <= value <= limit:
                raise invalid(f"{name} must be between 1 and {limit}, got {number(value)}")
        if isinstance(fields.get("text"), str):
            await self._check_text(run, fields["text"], run.loaded.pieces)
        try:
            request = run.loaded.settle(request, dataclasses.asdict(self.limits))
            key = run.loaded.batch_key(request)
        except UserError as error:
            raise invalid(str(error)) from None
        return await self._submit((recipe.name, run.name, key), request,
                                  functools.partial(answer_batch, run))

    def _parse(self, recipe: Recipe, body: bytes, content_type: str) -> tuple[Any, ServedRun]:
        """The request as its Run's request (or upload) and the run it names."""
        if not (recipe.run_class.uploads
                and content_type.lower().startswith("multipart/form-data")):
            request = parse_json(body, recipe.run_class.request)
            return request, self.run(request.run, recipe)
        fields = parse_multipart(body, content_type)
        missing = [name for name in ("run", "image") if name not in fields]
        if missing:
            raise invalid(f"the form lacks the field {quoted(missing[0])} (fields: run, image)")
        run = self.run(fields["run"].decode("utf-8", "replace"), recipe)
        image = open_upload(fields["image"], self.limits.max_pixels)  # the header only
        return Upload(run=run.name, image=image), run

    def explaining(self, name: str) -> ServedRun:
        """The run called `name` if its Run explains: 404 when there is none, 422 when its
        task has no explain."""
        if name not in self.runs:
            raise RequestError(404, f"unknown run {quoted(name)}; runs: {', '.join(self.runs)}")
        run = self.runs[name]
        if not run.explains:
            tasks = [recipe.title for recipe in RECIPES.values()
                     if issubclass(recipe.run_class, Explains)]
            raise invalid(f"run {name} is {run.loaded.kind}; /api/explain explains "
                          f"{' and '.join(tasks)} runs only")
        return run

    async def explain(self, body: bytes) -> dict:
        """Attention and the attributions asked for of one output: the run's translation of
        the text, or the target given (forced). One explanation at a time, each within
        limits.explain_budget_s (past it: 413)."""
        request = parse_json(body, ExplainRequest)
        run = self.explaining(request.run)
        limit = self.limits.max_explain_steps
        if not 1 <= request.steps <= limit:
            raise invalid(f"steps must be between 1 and {limit}, got {number(request.steps)}")
        unable = [method for method in request.methods if method not in run.explains]
        if unable:  # only int8 runs lack a method: their layers have no gradient
            raise invalid(f"run {run.name} runs in int8, which has no gradients: it can "
                          f"explain by {', '.join(run.explains)} only, not {unable[0]}")
        if not request.methods and not run.loaded.has_attention:
            raise invalid(f"run {run.name} has no attention: ask for at least one method")
        await self._check_text(run, request.text, run.loaded.pieces)
        if request.target is not None:
            await self._check_text(run, request.target, run.loaded.target_pieces, "target",
                                   blank=True)
        decode = run.loaded.config.decode.overridden(n_best=1)  # the best translation only
        if decode.beam > self.limits.max_beam:
            decode = decode.overridden(beam=self.limits.max_beam)
        work = functools.partial(explain_batch, run, decode, self.limits.explain_budget_s)
        # a key of its own: explanations never wait for company, nor run in one batch
        return await self._submit(("explain", run.name, object()), request, work)

    async def _check_text(self, run: ServedRun, text: str, pieces: Callable[[str], int],
                          field: str = "text", blank: bool = False) -> None:
        if len(text) <= INLINE_CHARS:
            self._count_pieces(run, text, pieces, field, blank)
        else:
            await run_in_threadpool(self._count_pieces, run, text, pieces, field, blank)

    def _count_pieces(self, run: ServedRun, text: str, pieces: Callable[[str], int],
                      field: str = "text", blank: bool = False) -> None:
        """422 for blank text (unless `blank`: a target may be the empty output); 413 past
        max_tokens pieces (or, for the source text, what the model can address)."""
        if not blank and not text.strip():
            raise invalid(f"{field} is empty; give a sentence")
        limit = self.limits.max_tokens
        if field == "text":
            limit = min(limit, run.source_limit or limit)
        words = len(text.split())  # each word is at least one piece: a cheap early refusal
        if words > limit:  # the count is then a lower bound, and says so
            raise too_large(f"{field} has at least {words:,} pieces (one a word), more than "
                            f"the {limit} run {run.name} accepts")
        count = pieces(text)
        if count > limit:
            raise too_large(f"{field} has {count:,} pieces, more than the {limit} run "
                            f"{run.name} accepts")

    async def _submit(self, key: Hashable, item: Any, work: Callable) -> Any:
        try:
            future = self.batcher.submit(key, item, work)
        except QueueFull:
            raise RequestError(503, f"the server is busy ({self.limits.queue_size} requests "
                               f"are waiting); try again shortly",
                               {"Retry-After": str(RETRY_AFTER_S)}) from None
        return await asyncio.wrap_future(future)
