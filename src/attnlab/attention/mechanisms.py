"""The mechanisms by name: one table, so that configs, tests and the CLI read the same list.

    mechanism = build_mechanism("local-p", score, MechanismOptions(window=10))
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

MECHANISMS: dict[str, MechanismFactory] = {
    "global": lambda score, o: Attention(score),
    "local-m": lambda score, o: LocalAttention(score, window=o.window, predictive=False),
    "local-p": lambda score, o: LocalAttention(score, window=o.window, predictive=True),
    "hard": lambda score, o: HardAttention(score, expectation_prob=o.expectation_prob),
}


def build_mechanism(name: str, score: Score, options: MechanismOptions) -> Mechanism:
    """The mechanism MECHANISMS names, around a built score."""
    if name not in MECHANISMS:
        raise ValueError(f"unknown mechanism {name!r}; options: {', '.join(MECHANISMS)}")
    return MECHANISMS[name](score, options)
