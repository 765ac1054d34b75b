"""A trained captioning run (Show, Attend and Tell), loaded back to caption, evaluate and plot.

    run = CaptioningRun.load("runs/shapes-soft")
    run.caption(["cat.png"], beam=5)[0].text
    run.evaluate(split="test").format()
"""

from __future__ import annotations

import base64
import functools
import io
import os
import struct
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from PIL import Image
from pydantic import BaseModel, Field

from attnlab.data import Vocab, load_vocab
from attnlab.errors import UserError
from attnlab.models import Captioner, build_captioner, set_hard_decoding
from attnlab.train.runs import listed, load_weights, open_run
from attnlab.train.trained import Request, Run, Upload, Whole, number

from .config import DecodeConfig, RunConfig
from .data import CaptionedImage, load_image, read_karpathy, square_pixels
from .inference import Caption, caption_pixels
from .task import TASK, VOCAB_NAME, signature


@dataclass
class CaptionEvaluation:
    """BLEU-1..4 of a split's captions (and, on the shapes data, localisation)."""

    split: str
    images: int
    beam: int
    hard_attention: str | None  # how a hard-attention model was read; None for soft
    metrics: dict[str, float]
    bleu_signature: str

    def format(self) -> str:
        reading = (f", hard attention read as {self.hard_attention}"
                   if self.hard_attention else "")
        lines = [f"{self.split}: {self.images} images, beam {self.beam}{reading}"]
        lines += [f"BLEU-{order}  {self.metrics[f'bleu{order}']:6.2f}" for order in range(1, 5)]
        lines.append(f"  ({self.bleu_signature})")
        if "localisation" in self.metrics:
            metrics = self.metrics
            lines += [
                f"localisation  {metrics['localisation']:6.2f}  % of attention inside the named "
                f"object's box while its colour and shape words are produced",
                f"chance        {metrics['localisation_chance']:6.2f}  % of the image those "
                f"boxes cover (what uniform attention scores)",
                f"unmatched     {metrics['unmatched_mentions']:6.2f}  % of mentions naming no "
                f"object of the image (not scored)",
                f"words scored  {metrics['localised_words']:6.0f}"]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        metrics = record.pop("metrics")
        record.pop("hard_attention")
        return {**record, **metrics}

    def outputs(self) -> dict[str, Callable[[], str | bytes]]:
        return {}

    def timing(self) -> str | None:
        return None


class CaptionExampleRequest(Request):
    """Caption an uploaded image or a test image of the run's data."""

    run: str = Field(description="a captioning run's name")
    example: Whole = Field(description="which image of the run's test split to caption (0-based)")


class CaptionResponse(BaseModel):
    caption: str
    tokens: list[str] = Field(description="the caption's words (no end token)")
    attention: list[list[float]] = Field(description="one row per word, grid[0] * grid[1] "
                                         "values in row-major order: where the word looked")
    grid: list[int] = Field(description="[H, W] of the annotation grid")
    image: str = Field(description="the square image the model saw, as a PNG data URL")


# What Pillow raises for an image it cannot decode (struct.error: a file cut short).
UNDECODABLE = (OSError, ValueError, SyntaxError, EOFError, struct.error)


@dataclass(repr=False)
class CaptioningRun(Run):
    """A captioning run's config, vocabulary and model (in eval mode)."""

    task: ClassVar[str] = TASK
    kind: ClassVar[str] = "a captioning model"
    verbs: ClassVar[dict[str, str]] = {"caption": ".caption(images)"}
    evaluate_options: ClassVar[tuple[str, ...]] = ("split", "limit")
    plot_options: ClassVar[tuple[str, ...]] = ("hard_decoding",)
    plot_example: ClassVar[str] = "IMAGE.png"
    request: ClassVar[type[Request]] = CaptionExampleRequest
    response: ClassVar[type[BaseModel] | None] = CaptionResponse
    uploads: ClassVar[bool] = True

    config: RunConfig
    model: Captioner
    vocab: Vocab

    @classmethod
    def load(cls, path: str | os.PathLike, checkpoint: str | None = None, *,
             device: str | torch.device = "cpu") -> CaptioningRun:
        run = open_run(path, RunConfig, checkpoint, task=TASK)
        vocab = load_vocab(run.path, VOCAB_NAME)
        model = build_captioner(run.config.model, len(vocab), run.config.data.image_size)
        load_weights(run, model, signature(run.config, len(vocab)), device)
        return cls(run.path, run.checkpoint, run.meta, run.config, model, vocab)

    @classmethod
    def plot_name(cls, example: str) -> str:
        return f"{Path(example).stem}-attention.png"

    def decode_settings(self, decode: DecodeConfig | None = None,
                        **overrides: Any) -> DecodeConfig:
        """`decode` (the run's when None) with `overrides` in their place (beam, alpha,
        batch_size, hard_attention, max_len)."""
        return (decode or self.config.decode).overridden(**overrides)

    def caption(self, images: Sequence[str | os.PathLike | Image.Image],
                decode: DecodeConfig | None = None, **overrides: Any) -> list[Caption]:
        """One Caption per image (a file or a PIL image): words, text, attention
        (words, h, w) over the annotation grid, log_prob; beam search with `decode` (the run's
        when None) and `overrides` by name (beam, alpha, hard_attention...). Images are scaled
        and centre-cropped as in training."""
        images = listed(images, "caption", "images", (str, bytes, os.PathLike, Image.Image))
        size = self.config.data.image_size
        pixels = [self.square_pixels(image) if isinstance(image, Image.Image)
                  else load_image(image, size)[0] for image in images]
        if not pixels:
            return []
        return self.caption_pixels(torch.from_numpy(np.stack(pixels)), decode, **overrides)

    def square_pixels(self, image: Image.Image) -> np.ndarray:
        """An image made the model's square, as in training: (S, S, 3) uint8."""
        return square_pixels(image, self.config.data.image_size)  # it converts what it keeps

    def test_image_count(self) -> int:
        """How many images the run's test split has (its data files must be there)."""
        return len(_test_images(self.config.data.json, self.config.data.test_split))

    def test_image(self, index: int) -> np.ndarray:
        """The index-th image of the run's test split, as the model sees it."""
        data = self.config.data
        image = _test_images(data.json, data.test_split)[index]
        return load_image(Path(data.images) / image.path, data.image_size)[0]

    def caption_pixels(self, pixels: torch.Tensor, decode: DecodeConfig | None = None,
                       **overrides: Any) -> list[Caption]:
        """Caption resized images (N, S, S, 3) uint8, as caption does."""
        decode = self.decode_settings(decode, **overrides)
        set_hard_decoding(self.model, decode.hard_attention)
        return caption_pixels(self.model, pixels, self.vocab, self.config.data, decode)

    def answer_batch(self, requests: Sequence[Any]) -> list[dict[str, Any] | UserError]:
        """{"caption", "tokens", "attention", "grid", "image"} per request (a test image's
        number or an upload): the images that decode are captioned together."""
        answers: list[dict[str, Any] | UserError] = []
        pixels, readable = [], []
        for index, request in enumerate(requests):
            try:
                pixels.append(self._request_pixels(request))
                readable.append(index)
                answers.append({})
            except UserError as error:
                answers.append(error)
        if pixels:
            captions = self.caption_pixels(torch.from_numpy(np.stack(pixels)))
            for index, image, caption in zip(readable, pixels, captions, strict=True):
                steps, height, width = caption.attention.shape  # (T, h, w)
                answers[index] = {"caption": caption.text, "tokens": caption.words,
                                  "attention": caption.attention.reshape(steps, -1).tolist(),
                                  "grid": [height, width], "image": _png_data_url(image)}
        return answers

    def _request_pixels(self, request: Any) -> np.ndarray:
        """The square the model sees of an upload, or of the request's test image."""
        if isinstance(request, Upload):
            try:
                return self.square_pixels(request.image)
            except UNDECODABLE as error:
                reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
                raise UserError(f"the image cannot be decoded ({reason or type(error).__name__})"
                                ) from None
        try:
            count = self.test_image_count()
        except UserError as error:
            raise UserError(f"the run cannot show its test images: {error}") from None
        if not 0 <= request.example < count:
            raise UserError(f"example must be between 0 and {count - 1} (the run has {count} "
                            f"test images), got {number(request.example)}")
        return self.test_image(request.example)

    def evaluate(self, *, split: str | None = None, limit: int | None = None,
                 decode: DecodeConfig | None = None, progress: bool = False,
                 log: Callable[[str], None] = print, **overrides: Any) -> CaptionEvaluation:
        """Caption a split's images (default the test split; the first `limit`) and score
        them: BLEU-1..4 against all their references and, on shapes, localisation."""
        from .evaluate import evaluate_split

        decode = self.decode_settings(decode, **overrides)
        metrics, bleu_signature, count = evaluate_split(self, split, decode=decode, limit=limit,
                                                        progress=progress)
        hard = self.config.model.decoder.attention.hard
        return CaptionEvaluation(split or self.config.data.test_split, count, decode.beam,
                                 decode.hard_attention if hard else None, metrics,
                                 bleu_signature)

    def plot(self, example: str, output: str | os.PathLike, *,
             decode: DecodeConfig | None = None, **overrides: Any) -> list[str]:
        """Caption the image file `example` and draw where each word looked into `output`."""
        from .figure import plot_caption

        caption, path = plot_caption(self, example, Path(output),
                                     self.decode_settings(decode, **overrides))
        return [f"{example}\t{caption.text}", f"figure: {path}"]


def _png_data_url(pixels: np.ndarray) -> str:
    """(H, W, 3) uint8 -> "data:image/png;base64,..." (for the explorer to draw on)."""
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


@functools.lru_cache(maxsize=16)
def _test_images(json_path: str, split: str) -> tuple[CaptionedImage, ...]:
    return tuple(image for image in read_karpathy(json_path) if image.split == split)
