"""Perplexity of a trained language model on sentences (one a line)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from torch import nn

from attnlab.train.progress import progress_bar
from attnlab.train.validation import perplexity

from .corpus import EncodedText
from .task import text_nll


@dataclass
class PerplexityResult:
    """perplexity = exp(nll / tokens); tokens count every sentence's </s>; `skipped` counts
    empty lines and sentences longer than the run's data.max_len pieces."""

    perplexity: float
    nll: float
    tokens: int
    sentences: int
    skipped: int
    checkpoint: str

    def format(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def outputs(self) -> dict[str, Callable[[], str | bytes]]:
        return {}

    def timing(self) -> str | None:
        return None

    def summary(self) -> str:
        skipped = f", {self.skipped} lines skipped" if self.skipped else ""
        return (f"perplexity {self.perplexity:.2f} (loss {self.nll / max(self.tokens, 1):.4f} "
                f"per token; {self.tokens} tokens in {self.sentences} sentences{skipped}; "
                f"checkpoint {self.checkpoint})")


def text_perplexity(model: nn.Module, encoded: EncodedText, batch_size: int, checkpoint: str,
                    progress: bool = False) -> PerplexityResult:
    """Per-token perplexity of the encoded sentences, `batch_size` a batch; `progress`: a bar
    on a terminal while it reads."""
    nll, tokens = _text_nll(model, encoded.sentences, batch_size, progress)
    return PerplexityResult(perplexity(nll / max(tokens, 1)), nll, tokens,
                            len(encoded.sentences), encoded.empty + encoded.too_long, checkpoint)


def _text_nll(model, sentences: list[list[int]], batch_size: int,
              progress: bool) -> tuple[float, int]:
    """task.text_nll one batch at a time (the same length-sorted batches, summed in the same
    order), counting the sentences on a progress bar."""
    ordered = sorted(sentences, key=len)
    nll, tokens = 0.0, 0
    with progress_bar(len(ordered), "perplexity", enabled=progress, unit="sentence") as bar:
        for start in range(0, len(ordered), batch_size):
            batch = ordered[start : start + batch_size]
            batch_nll, batch_tokens = text_nll(model, batch, batch_size)
            nll, tokens = nll + batch_nll, tokens + batch_tokens
            bar.update(len(batch))
    return nll, tokens
