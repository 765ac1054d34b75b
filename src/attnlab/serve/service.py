"""The explorer's requests, checked against the limits and handed to the micro-batcher:
translate (batched beam search), caption (an upload or a test image), read (the LSTMN), explain
(attention beside the attributions of one output, within a time budget).

Every check that can refuse runs before a request joins the queue, so the worker only sees
work it can do; a full queue is a 503 with Retry-After.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Hashable
from typing import Any

from starlette.concurrency import run_in_threadpool

from attnlab.errors import ConfigError
from attnlab.recipes import RECIPES

from .batching import MicroBatcher, QueueFull
from .bodies import parse_json, parse_multipart
from .images import open_upload, upload_pixels
from .limits import Limits
from .problems import RequestError, invalid, number, quoted, too_large
from .runs import ServedRun
from .schemas import (
    CaptionExampleRequest,
    ExplainRequest,
    ReadRequest,
    RunRequest,
    TranslateRequest,
)
from .work import (
    answer_batch,
    caption_batch,
    example_pixels,
    explain_batch,
    read_batch,
    translate_batch,
)

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

    def run(self, name: str, task: str) -> ServedRun:
        """The run called `name`: 404 when there is none, 422 when it is another task's."""
        if name not in self.runs:
            raise RequestError(404, f"unknown run {quoted(name)}; runs: {', '.join(self.runs)}")
        run = self.runs[name]
        if run.task != task:
            recipe = RECIPES[run.task]
            raise invalid(f"run {name} is a {recipe.title} run; use {recipe.endpoint}")
        return run

    async def translate(self, body: bytes) -> dict:
        request = parse_json(body, TranslateRequest)
        run = self.run(request.run, "translation")
        limit = self.limits.max_beam
        for name, value in (("beam", request.beam), ("nbest", request.nbest)):
            if value is not None and not 1 <= value <= limit:
                raise invalid(f"{name} must be between 1 and {limit}, got {number(value)}")
        try:   # the run's defaults and the request's choices, resolved and checked once
            decode = run.loaded.config.decode.overridden(beam=request.beam, n_best=request.nbest)
        except ConfigError as error:
            raise invalid(str(error)) from None
        if decode.beam > limit:  # the run's own beam, past the server's limit
            decode = decode.overridden(beam=limit)
        await self._check_text(run, request.text, run.loaded.vocabs.src)
        work = functools.partial(translate_batch, run, decode, request.level)
        return await self._submit(("translate", run.name, decode.beam, decode.n_best,
                                   request.level), request.text, work)

    async def read(self, body: bytes) -> dict:
        request = parse_json(body, ReadRequest)
        run = self.run(request.run, "lm")
        if run.config["model"]["kind"] != "lstmn":
            raise invalid(f"run {run.name} is an {run.config['model']['kind']} language model; "
                          f"only an LSTMN has self-attention to show")
        await self._check_text(run, request.text, run.loaded.vocab)
        return await self._submit(("read", run.name), request.text,
                                  functools.partial(read_batch, run))

    def explaining(self, name: str) -> ServedRun:
        """The run called `name` if its Run explains: 404 when there is none, 422 when its
        task has no explain."""
        if name not in self.runs:
            raise RequestError(404, f"unknown run {quoted(name)}; runs: {', '.join(self.runs)}")
        run = self.runs[name]
        if not run.explains:
            tasks = [recipe.title for recipe in RECIPES.values() if recipe.run_class.explains]
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
        await self._check_text(run, request.text, run.loaded.vocabs.src)
        if request.target is not None:
            await self._check_text(run, request.target, run.loaded.vocabs.tgt, "target",
                                   blank=True)
        decode = run.loaded.config.decode.overridden(n_best=1)  # the best translation only
        if decode.beam > self.limits.max_beam:
            decode = decode.overridden(beam=self.limits.max_beam)
        work = functools.partial(explain_batch, run, decode, self.limits.explain_budget_s)
        # a key of its own: explanations never wait for company, nor run in one batch
        return await self._submit(("explain", run.name, object()), request, work)

    async def caption(self, body: bytes, content_type: str) -> dict:
        """A multipart upload (fields `run`, `image`) or JSON {"run", "example"}."""
        if content_type.lower().startswith("multipart/form-data"):
            fields = parse_multipart(body, content_type)
            missing = [name for name in ("run", "image") if name not in fields]
            if missing:
                raise invalid(f"the form lacks the field {quoted(missing[0])} (fields: run, image)")
            run = self.run(fields["run"].decode("utf-8", "replace"), "captioning")
            image = open_upload(fields["image"], self.limits.max_pixels)  # the header only
            source = functools.partial(upload_pixels, image, run.loaded.square_pixels)
        else:
            request = parse_json(body, CaptionExampleRequest)
            run = self.run(request.run, "captioning")
            source = functools.partial(example_pixels, run, request.example)
        return await self._submit(("caption", run.name), source,
                                  functools.partial(caption_batch, run))

    async def answer(self, task: str, body: bytes) -> dict:
        """A request to the endpoint of a task without a form of its own in the explorer: its
        Run's answer(request) (a UserError is a 422 naming what was wrong)."""
        request = parse_json(body, RunRequest)
        run = self.run(request.run, task)
        fields = dict(request.model_extra or {})
        return await self._submit((task, run.name), fields, functools.partial(answer_batch, run))

    async def _check_text(self, run: ServedRun, text: str, vocab, field: str = "text",
                          blank: bool = False) -> None:
        if len(text) <= INLINE_CHARS:
            self._count_pieces(run, text, vocab, field, blank)
        else:
            await run_in_threadpool(self._count_pieces, run, text, vocab, field, blank)

    def _count_pieces(self, run: ServedRun, text: str, vocab, field: str = "text",
                      blank: bool = False) -> None:
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
        pieces = len(vocab.tokenize(text))
        if pieces > limit:
            raise too_large(f"{field} has {pieces:,} pieces, more than the {limit} run "
                            f"{run.name} accepts")

    async def _submit(self, key: Hashable, item: Any, work: Callable) -> Any:
        try:
            future = self.batcher.submit(key, item, work)
        except QueueFull:
            raise RequestError(503, f"the server is busy ({self.limits.queue_size} requests "
                               f"are waiting); try again shortly",
                               {"Retry-After": str(RETRY_AFTER_S)}) from None
        return await asyncio.wrap_future(future)
