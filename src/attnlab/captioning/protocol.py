"""What the captioning recipe's evaluation and figure ask of a trained run. CaptioningRun has
it; these modules never import the Run, whose verbs (evaluate, plot) call into them."""

from __future__ import annotations

from typing import Any, Protocol

from torch import Tensor

from .config import DecodeConfig, RunConfig
from .inference import Caption


class CaptioningRunLike(Protocol):
    """A captioning run: its config, and its captions of resized images."""

    @property
    def config(self) -> RunConfig: ...

    def caption_pixels(self, pixels: Tensor, decode: DecodeConfig | None = None,
                       **overrides: Any) -> list[Caption]: ...
