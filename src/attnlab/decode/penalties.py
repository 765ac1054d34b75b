"""How finished hypotheses are scored: log-probability over a length normalisation, plus the
GNMT coverage penalty (Wu et al. 2016, eq. 14):

    s(Y, X) = log P(Y | X) / lp(Y) + cp(X; Y)
    lp(Y)   = ((5 + |Y|) / 6) ** alpha                              ("gnmt")
            = |Y|                                                   ("average": the mean log-prob)
            = 1                                                     ("none": the log-prob alone)
    cp(X;Y) = beta * sum_i log(min(sum_j a_{j,i}, 1.0))

a_{j,i} is the attention of output token j on source position i (the real positions, "</s>"
included); cp <= 0 punishes source positions the hypothesis has not attended to. A position
never attended to at all would give log 0: its coverage is taken as at least COVERAGE_FLOOR,
so the penalty stays finite (local attention leaves exact zeros outside its windows). Hard
attention is scored on its expected weights (the alpha it samples from), which is what it
returns as weights.

alpha and beta are at most ALPHA_MAX and BETA_MAX (Wu et al. found 0.6 to 1 and 0.2 best):
the bounds keep every score a finite number (with alpha 1e308 the length penalty overflows,
with beta 1e308 the coverage penalty is -inf, which JSON cannot hold).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch import Tensor

from attnlab.errors import ConfigError

COVERAGE_FLOOR = 1e-20  # the least coverage a source position counts with (log: -46)
ALPHA_MAX = 10.0  # ((5 + 10**6) / 6) ** 10 is 2e52: finite for any output length
BETA_MAX = 10.0   # 10 * 46 per source position: finite for any source

LENGTH_PENALTIES: dict[str, Callable[[int, float], float]] = {
    "gnmt": lambda length, alpha: ((5.0 + length) / 6.0) ** alpha,
    "average": lambda length, alpha: float(max(length, 1)),
    "none": lambda length, alpha: 1.0,
}


def coverage_penalty(attention: Tensor, beta: float) -> float:
    """cp = beta * sum_i log(min(sum_j a_{j,i}, 1)) of one hypothesis's attention (T, S)
    (Wu et al. 2016, eq. 14); 0.0 when beta is 0."""
    if beta == 0:
        return 0.0
    coverage = attention.double().sum(0).clamp(COVERAGE_FLOOR, 1.0)  # (S,)
    return beta * float(coverage.log().sum())


@dataclass(frozen=True)
class Penalty:
    """The score finished hypotheses are ranked by (see the module docstring): `length` a key
    of LENGTH_PENALTIES, `alpha` its exponent (gnmt only), `beta` the coverage penalty's
    weight (0: none; it needs a model with attention)."""

    length: str = "gnmt"
    alpha: float = 1.0
    beta: float = 0.0

    def __post_init__(self) -> None:
        # ConfigErrors (ValueErrors too): a setting of decode, or of a call, one sentence.
        if self.length not in LENGTH_PENALTIES:
            raise ConfigError(f"unknown length penalty {self.length!r}; options: "
                              f"{sorted(LENGTH_PENALTIES)}")
        for name, value, most in (("alpha", self.alpha, ALPHA_MAX),
                                  ("beta", self.beta, BETA_MAX)):
            if not 0 <= value <= most:  # NaN too
                raise ConfigError(f"{name} (decode.{name}) must be a number from 0 to "
                                  f"{most:g}, got {value!r}")

    def score(self, log_prob: float, length: int, attention: Tensor | None) -> float:
        """s(Y, X) of a hypothesis of `length` tokens (EOS included) with summed `log_prob` and
        attention (length, S_real) over its real source positions."""
        score = log_prob / LENGTH_PENALTIES[self.length](length, self.alpha)
        if self.beta:
            if attention is None:
                raise ValueError("the coverage penalty (beta > 0) needs attention weights; "
                                 "this model has none")
            score += coverage_penalty(attention, self.beta)
        return score


def resolve_penalty(penalty: Penalty | None, alpha: float | None) -> Penalty:
    """The penalty a search was given: `penalty`, or GNMT's with `alpha` (default 1.0)."""
    if penalty is not None and alpha is not None:
        raise ValueError("give alpha or penalty, not both (Penalty has its own alpha)")
    return penalty if penalty is not None else Penalty(alpha=1.0 if alpha is None else alpha)

