"""What the translation recipe's modules ask of a trained run (evaluation, figures, the report,
ensembles' member attention). TranslationRun has it; these modules never import the Run, whose
verbs (evaluate, plot, report) call into them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from .alignment.protocol import AlignableRun
from .config import DecodeConfig
from .translate import TranslationResult


class TranslatingRun(AlignableRun, Protocol):
    """A translation run: alignment's model, vocabularies and config, and where it lies, which
    weights, its members (an ensemble's; empty for one run) and its decoding verbs."""

    @property
    def path(self) -> Path: ...

    @property
    def checkpoint(self) -> str: ...

    @property
    def meta(self) -> dict[str, Any]: ...

    @property
    def members(self) -> Sequence[Any]: ...

    def translate(self, lines: Sequence[str], decode: DecodeConfig | None = None, *,
                  replace_unk: bool = False, dictionary: Any = None,
                  member_attention: bool = False, **overrides: Any
                  ) -> list[TranslationResult]: ...

    def stream(self, lines: Iterable[str], decode: DecodeConfig | None = None, *,
               pool_size: int | None = None, tick: Callable[[int], None] | None = None,
               replace_unk: bool = False, dictionary: Any = None,
               member_attention: bool = False, **overrides: Any
               ) -> Iterator[TranslationResult]: ...

    def decode_settings(self, decode: DecodeConfig | None = None,
                        **overrides: Any) -> DecodeConfig: ...
