"""What alignment asks of a trained translation run. TranslationRun has it; this package never
imports the Run, whose verbs (`align`, `evaluate`) call into it."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from attnlab.models import Seq2Seq

from ..config import RunConfig
from ..corpus import Vocabularies


@runtime_checkable
class AlignableRun(Protocol):
    """A run whose attention can be read as links: its model, vocabularies and config."""

    @property
    def config(self) -> RunConfig: ...

    @property
    def model(self) -> Seq2Seq: ...

    @property
    def vocabs(self) -> Vocabularies: ...

    @property
    def has_attention(self) -> bool: ...

    @property
    def character_level(self) -> bool:
        """Whether a character is the unit of alignment (the dates task's gold links
        characters)."""
        ...
