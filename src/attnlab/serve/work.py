"""What the worker thread runs: one function per endpoint that takes a batch of checked inputs
and returns one JSON-ready answer per input (or the RequestError that input earned).

Translation decodes a whole batch in one beam search; captions decode their images together;
the LSTMN reads one sentence at a time (its tape read is a step loop anyway).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import cast

import numpy as np
import torch

from attnlab.captioning import CaptionedImage, read_karpathy
from attnlab.captioning.data import load_image
from attnlab.captioning.inference import caption_pixels
from attnlab.errors import UserError
from attnlab.lm import read_with_language_model
from attnlab.translation import DecodeConfig, TranslationResult, translate

from .images import png_data_url
from .problems import RequestError, invalid, number
from .runs import ServedRun

PixelSource = Callable[[], np.ndarray]  # gives (S, S, 3) uint8 or raises RequestError


def translate_batch(run: ServedRun, decode: DecodeConfig, level: str,
                    texts: list[str]) -> list[dict]:
    """{"hypotheses": [...]} per text; all texts in one batched beam search."""
    trained = run.loaded
    found = translate(trained.model, trained.vocabs, texts,
                      decode.overridden(batch_size=len(texts)))
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
        trained = run.loaded
        captions = caption_pixels(trained.model, torch.from_numpy(np.stack(pixels)),
                                  trained.vocab, trained.config.data, trained.config.decode)
        for index, image, caption in zip(readable, pixels, captions, strict=True):
            steps, height, width = caption.attention.shape  # (T, h, w)
            answers[index] = {"caption": caption.text, "tokens": caption.words,
                              "attention": caption.attention.reshape(steps, -1).tolist(),
                              "grid": [height, width], "image": png_data_url(image)}
    return cast(list[dict | RequestError], answers)  # each image answered or refused


def example_pixels(run: ServedRun, index: int) -> np.ndarray:
    """The index-th image of the run's test split, as the model sees it."""
    data = run.loaded.config.data
    try:
        images = _test_images(data.json, data.test_split)
    except UserError as error:
        raise invalid(f"run {run.name} cannot show its test images: {error}") from None
    if not 0 <= index < len(images):
        raise invalid(f"example must be between 0 and {len(images) - 1} (run {run.name} has "
                      f"{len(images)} test images), got {number(index)}")
    try:
        return load_image(Path(data.images) / images[index].path, data.image_size)[0]
    except UserError as error:
        raise invalid(f"run {run.name} cannot show example {index}: {error}") from None


@functools.lru_cache(maxsize=16)
def _test_images(json_path: str, split: str) -> tuple[CaptionedImage, ...]:
    return tuple(image for image in read_karpathy(json_path) if image.split == split)


def read_batch(run: ServedRun, texts: list[str]) -> list[dict | RequestError]:
    """{"tokens", "weights"} per text: the LSTMN's last layer, row t over positions i < t."""
    answers: list[dict | RequestError] = []
    for text in texts:
        try:
            reading = read_with_language_model(run.loaded.model, run.loaded.vocab, text)
        except UserError as error:
            answers.append(invalid(str(error)))
            continue
        answers.append({"tokens": reading.tokens, "weights": reading.weights[-1].tolist()})
    return answers
