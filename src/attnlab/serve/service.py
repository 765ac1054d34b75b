"""The explorer's requests, checked against the limits and handed to the micro-batcher:
translate (batched beam search), caption (an upload or a test image), read (the LSTMN).

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
from .schemas import CaptionExampleRequest, ReadRequest, RunRequest, TranslateRequest
from .work import answer_batch, caption_batch, example_pixels, read_batch, translate_batch

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

    async def _check_text(self, run: ServedRun, text: str, vocab) -> None:
        if len(text) <= INLINE_CHARS:
            self._count_pieces(run, text, vocab)
        else:
            await run_in_threadpool(self._count_pieces, run, text, vocab)

    def _count_pieces(self, run: ServedRun, text: str, vocab) -> None:
        """422 for blank text; 413 past max_tokens pieces (or what the model can address)."""
        if not text.strip():
            raise invalid("text is empty; give a sentence")
        limit = min(self.limits.max_tokens, run.source_limit or self.limits.max_tokens)
        words = len(text.split())  # each word is at least one piece: a cheap early refusal
        if words > limit:  # the count is then a lower bound, and says so
            raise too_large(f"text has at least {words:,} pieces (one a word), more than the "
                            f"{limit} run {run.name} accepts")
        pieces = len(vocab.tokenize(text))
        if pieces > limit:
            raise too_large(f"text has {pieces:,} pieces, more than the {limit} run "
                            f"{run.name} accepts")

    async def _submit(self, key: Hashable, item: Any, work: Callable) -> Any:
        try:
            future = self.batcher.submit(key, item, work)
        except QueueFull:
            raise RequestError(503, f"the server is busy ({self.limits.queue_size} requests "
                               f"are waiting); try again shortly",
                               {"Retry-After": str(RETRY_AFTER_S)}) from None
        return await asyncio.wrap_future(future)
