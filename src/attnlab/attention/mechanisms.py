"""The mechanisms by name: one table, so that configs, tests and the CLI read the same list.

    mechanism = build_mechanism("local-p", score, MechanismOptions(window=10))
    mechanism_class("hard").samples   # True: asked of the class, before anything is built
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .base import Mechanism
from .global_attention import Attention
from .hard import HardAttention
from .local import LocalAttention
from .scores import Score


@dataclass(frozen=True)
class MechanismOptions:
    """What a mechanism may need besides its score; each reads only its own.
    window: local half-width D; expectation_prob: hard attention's chance of the soft
    expectation in training."""

    window: int | None = None
    expectation_prob: float = 0.5


MechanismFactory = Callable[[Score, MechanismOptions], Mechanism]


@dataclass(frozen=True)
class MechanismKind:
    """One line of the table: the class a name builds (what a config asks, before anything is
    built: its `samples` and `local`) and how it builds it around a score."""

    cls: type[Mechanism]
    build: MechanismFactory


MECHANISMS: dict[str, MechanismKind] = {
    "global": MechanismKind(Attention, lambda score, o: Attention(score)),
    "local-m": MechanismKind(LocalAttention, lambda score, o: LocalAttention(
        score, window=o.window, predictive=False)),
    "local-p": MechanismKind(LocalAttention, lambda score, o: LocalAttention(
        score, window=o.window, predictive=True)),
    "hard": MechanismKind(HardAttention, lambda score, o: HardAttention(
        score, expectation_prob=o.expectation_prob)),
}


def mechanism_class(name: str) -> type[Mechanism]:
    """The class of the mechanism MECHANISMS names (ValueError for an unknown name)."""
    return _kind(name).cls


def build_mechanism(name: str, score: Score, options: MechanismOptions) -> Mechanism:
    """The mechanism MECHANISMS names, around a built score."""
    return _kind(name).build(score, options)


def _kind(name: str) -> MechanismKind:
    if name not in MECHANISMS:
        raise ValueError(f"unknown mechanism {name!r}; options: {', '.join(MECHANISMS)}")
    return MECHANISMS[name]
