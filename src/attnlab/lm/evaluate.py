"""Perplexity of a trained language model on a text file (one sentence a line)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from attnlab.data import read_lines
from attnlab.errors import ConfigError, DataError
from attnlab.train.validation import perplexity

from .corpus import encode_text
from .loading import load_language_model
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

    def summary(self) -> str:
        skipped = f", {self.skipped} lines skipped" if self.skipped else ""
        return (f"perplexity {self.perplexity:.2f} (loss {self.nll / max(self.tokens, 1):.4f} "
                f"per token; {self.tokens} tokens in {self.sentences} sentences{skipped}; "
                f"checkpoint {self.checkpoint})")


def evaluate_perplexity(run_dir: str | os.PathLike, text: str | os.PathLike | None = None, *,
                        checkpoint: str | None = None, batch_size: int = 64,
                        device: str = "cpu") -> PerplexityResult:
    """Per-token perplexity of the run's model (`best`, else `last`) on the file `text` (plain
    or `.gz`, one sentence a line; default: the run's data.test), with the run's vocabulary."""
    trained = load_language_model(Path(run_dir), checkpoint, device)
    data = trained.config.data
    if text is None and data.test is None:
        raise ConfigError("no text to evaluate: give one, or set data.test in the run's config")
    path = text if text is not None else data.path(data.test)
    lines = read_lines(path)
    encoded = encode_text(lines, trained.vocab, trained.config.data.max_len)
    if not encoded.sentences:
        raise DataError(f"{path} has no sentence to score ({encoded.summary()}); perplexity "
                        f"needs at least one non-empty line of at most {data.max_len} pieces")
    nll, tokens = text_nll(trained.model, encoded.sentences, batch_size)
    return PerplexityResult(perplexity(nll / max(tokens, 1)), nll, tokens, len(encoded.sentences),
                            encoded.empty + encoded.too_long, trained.checkpoint)
