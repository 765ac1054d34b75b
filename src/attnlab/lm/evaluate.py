"""Perplexity of a trained language model on a text file (one sentence a line)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from attnlab.data import read_lines
from attnlab.errors import ConfigError, DataError
from attnlab.train.progress import progress_bar
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
                        checkpoint: str | None = None, batch_size: int | None = None,
                        device: str = "cpu", progress: bool = False) -> PerplexityResult:
    """Per-token perplexity of the run's model (`best`, else `last`) on the file `text` (plain
    or `.gz`, one sentence a line; default: the run's data.test), with the run's vocabulary,
    `batch_size` sentences a batch (default: the run's data.batch_size, as validation reads);
    `progress`: a bar on a terminal while it reads."""
    trained = load_language_model(Path(run_dir), checkpoint, device)
    data = trained.config.data
    if text is not None:
        path: str | os.PathLike = text
    elif data.test is not None:
        path = data.path(data.test)
    else:
        raise ConfigError("no text to evaluate: give one, or set data.test in the run's config")
    lines = read_lines(path)
    encoded = encode_text(lines, trained.vocab, trained.config.data.max_len)
    if not encoded.sentences:
        raise DataError(f"{path} has no sentence to score ({encoded.summary()}); perplexity "
                        f"needs at least one non-empty line of at most {data.max_len} pieces")
    nll, tokens = _text_nll(trained.model, encoded.sentences, batch_size or data.batch_size,
                            progress)
    return PerplexityResult(perplexity(nll / max(tokens, 1)), nll, tokens, len(encoded.sentences),
                            encoded.empty + encoded.too_long, trained.checkpoint)


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
