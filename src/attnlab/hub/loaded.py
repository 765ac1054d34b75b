"""`attnlab.load(path)`: a run directory or an exported model directory, its task read from its
checkpoint, as an object with the task's verbs.

    model = attnlab.load("models/bahdanau")                  # best, else last; on the CPU
    model.translate(["Zwei Männer spielen Fußball ."], beam=5)[0].text
    attnlab.load("models/shapes").caption(["cat.png"])[0].text
    attnlab.load("models/lstmn").perplexity(lines).perplexity

Each is a thin wrapper over the recipe's loaded run (`.trained`: TrainedRun, TrainedCaptioner,
TrainedLanguageModel), which holds the model, vocabularies and config.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from PIL import Image

from attnlab.captioning import Caption
from attnlab.captioning.data import load_image, square_pixels
from attnlab.captioning.inference import caption_pixels
from attnlab.errors import CheckpointError, DataError
from attnlab.lm import PerplexityResult, read_with_language_model
from attnlab.lm.corpus import encode_text
from attnlab.lm.task import text_nll
from attnlab.train import RunDir, choose_checkpoint, run_task
from attnlab.train.validation import perplexity
from attnlab.translation import TranslationResult, translate_n_best
from attnlab.viz import SentenceReading

from .tasks import TASKS


@dataclass(repr=False)
class LoadedModel:
    """A loaded run: path, checkpoint ("best" or "last"), meta (its meta.json: step, metrics,
    signature) and trained (the recipe's loaded run); config and model (eval mode) from it."""

    task: ClassVar[str]
    path: Path
    checkpoint: str
    meta: dict
    trained: Any

    @property
    def config(self):
        return self.trained.config

    @property
    def model(self) -> torch.nn.Module:
        return self.trained.model

    def __repr__(self) -> str:
        step = self.meta.get("step", "?")
        return (f"{type(self).__name__}({str(self.path)!r}, checkpoint={self.checkpoint!r}, "
                f"step={step})")


class Translator(LoadedModel):
    task = "translation"

    def translate(self, lines: Sequence[str], *, beam: int | None = None,
                  nbest: int | None = None, alpha: float | None = None,
                  batch_size: int | None = None
                  ) -> list[TranslationResult] | list[list[TranslationResult]]:
        """One TranslationResult per line (text, score, tokens, attention), in input order,
        with the run's decode settings unless given. nbest=N: each line's N best hypotheses,
        best first (the beam widens to N when the run's is smaller)."""
        lines = _sequence(lines, "translate", "lines")
        if nbest is None:
            return list(self.trained.translate(lines, beam=beam, alpha=alpha,
                                               batch_size=batch_size))
        given = {"beam": beam or max(nbest, self.config.decode.beam), "alpha": alpha,
                 "batch_size": batch_size}
        decode = replace(self.config.decode, **{k: v for k, v in given.items() if v is not None})
        return translate_n_best(self.model, self.trained.vocabs, lines, decode, n_best=nbest)


class ImageCaptioner(LoadedModel):
    task = "captioning"

    def caption(self, images: Sequence[str | os.PathLike | Image.Image], *,
                beam: int | None = None) -> list[Caption]:
        """One Caption per image (a file or a PIL image): words, text, attention
        (words, h, w) over the annotation grid, log_prob; beam search, the run's beam unless
        given. Images are scaled and centre-cropped as in training."""
        images = _sequence(images, "caption", "images")
        size = self.config.data.image_size
        pixels = [square_pixels(image.convert("RGB"), size) if isinstance(image, Image.Image)
                  else load_image(image, size)[0] for image in images]
        if not pixels:
            return []
        return caption_pixels(self.model, torch.from_numpy(np.stack(pixels)),
                              self.trained.vocab, self.config.data, self.config.decode,
                              beam=beam)


class LanguageModelReader(LoadedModel):
    task = "language_model"

    def read(self, sentence: str) -> SentenceReading:
        """What an LSTMN attends to reading <s> w_1 .. w_n: tokens and weights
        (layers, T, T), row t the weights over the tokens before t."""
        return read_with_language_model(self.model, self.trained.vocab, sentence)

    def perplexity(self, lines: Iterable[str], *, batch_size: int = 64) -> PerplexityResult:
        """Per-token perplexity of the sentences (EOS counted), as `attnlab lm evaluate`
        computes it; empty lines and those over the run's data.max_len pieces are skipped."""
        lines = _sequence(lines, "perplexity", "lines")
        max_len = self.config.data.max_len
        encoded = encode_text(lines, self.trained.vocab, max_len)
        if not encoded.sentences:
            raise DataError(f"no sentence to score ({encoded.summary()}); perplexity needs at "
                            f"least one non-empty line of at most {max_len} pieces")
        nll, tokens = text_nll(self.model, encoded.sentences, batch_size)
        return PerplexityResult(perplexity(nll / max(tokens, 1)), nll, tokens,
                                len(encoded.sentences), encoded.empty + encoded.too_long,
                                self.checkpoint)


WRAPPERS: dict[str, type[LoadedModel]] = {
    wrapper.task: wrapper for wrapper in (Translator, ImageCaptioner, LanguageModelReader)}


def load(path: str | os.PathLike, *, checkpoint: str | None = None,
         device: str | torch.device = "cpu") -> LoadedModel:
    """A run directory or a model directory `attnlab export` wrote, loaded for its task:
    a Translator, ImageCaptioner or LanguageModelReader (`checkpoint`: "best", "last", or None
    for best-else-last; `device`: "cpu", "cuda", "auto"...). CheckpointError (one sentence)
    when `path` is not a trained run, or a file in it is not the one its meta.json records."""
    run_dir = RunDir(path)
    name = choose_checkpoint(run_dir, checkpoint)
    task = run_task(path, name)
    if task not in TASKS:
        raise CheckpointError(f"{path} holds a {task!r} model; attnlab.load reads "
                              f"{', '.join(sorted(TASKS))} runs")
    trained = TASKS[task].load(path, name, device=device)
    return WRAPPERS[task](Path(path), name, run_dir.read_meta(name), trained)


def _sequence(items, verb: str, what: str) -> list:
    """`items` as a list; a lone string (or image) is refused, since it is not a list of them."""
    if isinstance(items, (str, bytes, os.PathLike, Image.Image)):
        raise TypeError(f"{verb} takes a list of {what}; for one, pass [{what[:-1]}]")
    return list(items)
