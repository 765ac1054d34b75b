"""What the worker thread runs: one function per endpoint that takes a batch of checked inputs
and returns one JSON-ready answer per input (or the RequestError that input earned).

Translation decodes a whole batch in one beam search; captions decode their images together;
the LSTMN reads one sentence at a time (its tape read is a step loop anyway); an explanation is
one sentence's, within its time budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np
import torch

from attnlab.errors import UserError

from .budget import OverBudget, within
from .images import png_data_url
from .problems import RequestError, invalid, number, too_large
from .runs import ServedRun

if TYPE_CHECKING:
    from attnlab.translation import DecodeConfig, TranslationResult

    from .schemas import ExplainRequest

PixelSource = Callable[[], np.ndarray]  # gives (S, S, 3) uint8 or raises RequestError


def translate_batch(run: ServedRun, decode: DecodeConfig, level: str,
                    texts: list[str]) -> list[dict]:
    """{"hypotheses": [...]} per text; all texts in one batched beam search."""
    found = run.loaded.translate(texts, decode.overridden(batch_size=len(texts)))
    return [{"hypotheses": [hypothesis(h, level) for h in result.hypotheses]}
            for result in found]


def hypothesis(result: TranslationResult, level: str) -> dict:
    """One hypothesis at word or piece level: attention (target tokens, source tokens)."""
    if level == "word":
        tokens, source, attention = (result.target_words, result.source_words,
                                     result.word_attention)
    else:
        tokens, source, attention = (result.target_pieces, result.source_pieces,
                                     result.attention)
    return {"text": result.text, "score": float(result.score), "tokens": list(tokens),
            "source_tokens": list(source),
            "attention": None if attention is None else np.asarray(attention).tolist()}


def caption_batch(run: ServedRun, sources: list[PixelSource]) -> list[dict | RequestError]:
    """{"caption", "tokens", "attention", "grid", "image"} per image; the images that decode
    are captioned together, the others get their RequestError."""
    answers: list[dict | RequestError | None] = [None] * len(sources)
    pixels, readable = [], []
    for index, source in enumerate(sources):
        try:
            pixels.append(source())
            readable.append(index)
        except RequestError as error:
            answers[index] = error
    if pixels:
        captions = run.loaded.caption_pixels(torch.from_numpy(np.stack(pixels)))
        for index, image, caption in zip(readable, pixels, captions, strict=True):
            steps, height, width = caption.attention.shape  # (T, h, w)
            answers[index] = {"caption": caption.text, "tokens": caption.words,
                              "attention": caption.attention.reshape(steps, -1).tolist(),
                              "grid": [height, width], "image": png_data_url(image)}
    return cast(list[dict | RequestError], answers)  # each image answered or refused


def example_pixels(run: ServedRun, index: int) -> np.ndarray:
    """The index-th image of the run's test split, as the model sees it."""
    try:
        count = run.loaded.test_image_count()
    except UserError as error:
        raise invalid(f"run {run.name} cannot show its test images: {error}") from None
    if not 0 <= index < count:
        raise invalid(f"example must be between 0 and {count - 1} (run {run.name} has "
                      f"{count} test images), got {number(index)}")
    try:
        return run.loaded.test_image(index)
    except UserError as error:
        raise invalid(f"run {run.name} cannot show example {index}: {error}") from None


def read_batch(run: ServedRun, texts: list[str]) -> list[dict | RequestError]:
    """{"tokens", "weights"} per text: the LSTMN's last layer, row t over positions i < t."""
    answers: list[dict | RequestError] = []
    for text in texts:
        try:
            reading = run.loaded.read(text)
        except UserError as error:
            answers.append(invalid(str(error)))
            continue
        answers.append({"tokens": reading.tokens, "weights": reading.weights[-1].tolist()})
    return answers


def answer_batch(run: ServedRun, requests: list[dict]) -> list[dict | RequestError]:
    """The Run's answer to each request of its task's endpoint, one at a time."""
    answers: list[dict | RequestError] = []
    for request in requests:
        try:
            answers.append(run.loaded.answer(request))
        except UserError as error:
            answers.append(invalid(str(error)))
    return answers


def explain_batch(run: ServedRun, decode: DecodeConfig, budget_s: float,
                  requests: list[ExplainRequest]) -> list[dict | RequestError]:
    """The Run's explanation of each request (to_dict: pieces, log_probs and every view),
    each stopped with a 413 once it has taken `budget_s` seconds."""
    answers: list[dict | RequestError] = []
    for request in requests:
        try:
            # the worker runs without gradients; attribution needs them
            with within(run.loaded.model, budget_s), torch.enable_grad():
                found = run.loaded.explain(request.text, request.target,
                                           methods=request.methods, steps=request.steps,
                                           decode=decode)
        except OverBudget:
            answers.append(too_large(
                f"the explanation took longer than this server's {budget_s:g} s for one; ask "
                f"for fewer methods or integrated-gradients steps, or a shorter sentence"))
        except UserError as error:
            answers.append(invalid(str(error)))
        else:
            answers.append(found.to_dict())
    return answers
