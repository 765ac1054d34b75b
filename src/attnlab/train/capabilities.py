"""What some tasks' Runs can do beyond every Run's verbs, as Protocols: a front-end checks
`isinstance(run, Explains)` (or `issubclass(recipe.run_class, Explains)` before loading) and
mypy then knows the verb's signature, never `Any`.

    run = attnlab.load("runs/deen")
    if isinstance(run, Explains):
        run.explain("Ein Mann .").links("attention")
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # types only: the recipes, explain and viz sit beside or above train
    from attnlab.captioning.inference import Caption
    from attnlab.explain.explanation import Explanation
    from attnlab.viz import SentenceReading


@runtime_checkable
class Captions(Protocol):
    """Captions of images (files or PIL images), each with its words' attention."""

    def caption(self, images: Sequence[Any], decode: Any = None,
                **overrides: Any) -> list[Caption]: ...


@runtime_checkable
class Explains(Protocol):
    """Attention beside attributions of one output (attnlab.explain)."""

    def explain(self, sentence: str, target: str | None = None, *,
                methods: Sequence[str] = ..., steps: int = ...,
                **overrides: Any) -> Explanation: ...


@runtime_checkable
class Reads(Protocol):
    """An LSTMN's reading of a sentence: tokens and weights (layers, T, T)."""

    def read(self, sentence: str) -> SentenceReading: ...


@runtime_checkable
class Reports(Protocol):
    """One self-contained HTML page about the run; returns its path."""

    def report(self, output: str | os.PathLike, **options: Any) -> Path: ...
