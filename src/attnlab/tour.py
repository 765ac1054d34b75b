"""A two-second tour of the attention family on a toy input (what `attnlab demo` shows until the
translation demo lands).

Seven source "words" get random key vectors; the query is the key of the word "Katze" plus a little
noise. Content-based scores (dot, general, cosine, additive ...) should put most weight on "Katze";
the location score ignores content; local attention sees only a window.
"""

from __future__ import annotations

import torch

from attnlab.attention import SCORES, Attention, HardAttention, LocalAttention

WORDS = ["die", "kleine", "Katze", "sitzt", "auf", "der", "Matte"]
TARGET_WORD = 2  # "Katze"


def _row(label: str, weights: torch.Tensor) -> str:
    cells = " ".join(f"{w:6.2f}" for w in weights.tolist())
    return f"{label:<22}{cells}"


def _drawn_index(hard: HardAttention, query: torch.Tensor, keys: torch.Tensor) -> int:
    """The key position one hard-attention draw picks (B=1)."""
    sample = hard.attend(query, keys).sample
    assert sample is not None  # hard attention always says what it drew
    return int(sample.index)


def attention_tour(dim: int = 16, seed: int = 0) -> str:
    """The weights every mechanism gives the toy sentence, as a printable table."""
    torch.manual_seed(seed)
    keys = torch.randn(1, len(WORDS), dim)  # (B=1, Tk, D)
    query = keys[:, TARGET_WORD] * 3 + 0.1 * torch.randn(1, dim)  # (B=1, D): asks for "Katze"
    header = f"{'mechanism':<22}" + " ".join(f"{w[:6]:>6}" for w in WORDS)
    lines = [f"query = key of {WORDS[TARGET_WORD]!r} (x3, plus noise); weights over the source:",
             "", header, "-" * len(header)]
    with torch.no_grad():
        for name in sorted(SCORES):
            attention = Attention(name, query_dim=dim, key_dim=dim, max_len=len(WORDS))
            lines.append(_row(f"global {name}", attention(query, keys)[1][0]))
        for predictive in (False, True):
            local = LocalAttention("dot", window=1, predictive=predictive, query_dim=dim,
                                   key_dim=dim)
            kind = "local-p" if predictive else "local-m (p=3)"
            lines.append(_row(f"{kind} dot, D=1", local(query, keys, offset=3)[1][0]))
        hard = HardAttention("dot", query_dim=dim, key_dim=dim, expectation_prob=0.0).train()
        picks = [_drawn_index(hard, query, keys) for _ in range(200)]
        counts = torch.bincount(torch.tensor(picks), minlength=len(WORDS)) / len(picks)
        lines.append(_row("hard dot (200 draws)", counts))
    lines += ["", "Untrained parameters: general/additive/location/local-p learn what to look at;",
              "dot, scaled_dot and cosine already find the word the query asks for."]
    return "\n".join(lines)
