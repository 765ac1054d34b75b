"""A language-model run's answer to "is its self-attention an explanation?", as one JSON-able
record for `attnlab compare SUITE --explain` (DIR/<member>/seed-<k>/explain.json):

- the faithfulness tests of the LSTMN's attention over its earlier states (erasure flips and
  their controls, agreement with gradient x input, ERASER, the randomisation check) on the
  first test sentences, per sentence (faithfulness.py);
- the negative log-likelihood of every test sentence read with the model's own attention and
  with uniform attention over the earlier positions (Wiegreffe & Pinter 2019), per sentence,
  so the report gives both perplexities and their difference across seeds.

A run without self-attention (an LSTM) has nothing to test: its record says so. There is no
gold alignment for a language model, so no AER. `settings` fix how much is computed; a record
made with other settings is made again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attnlab.data import read_lines
from attnlab.errors import UserError
from attnlab.explain.summary import VERSION
from attnlab.train.progress import progress_bar

from .corpus import encode_text
from .faithfulness import faithfulness, sentence_nll
from .run import LanguageModelRun

# What a record computes unless the suite's `explain:` block says otherwise: the test sentences
# (the first ones) the erasure and agreement tests read. Uniform attention reads them all.
DEFAULTS: dict[str, Any] = {"sentences": 100}

__all__ = ["DEFAULTS", "VERSION", "explanation_scores"]   # VERSION: the faithfulness tests'


def explanation_scores(run_dir: Path, asked: Mapping[str, Any], evaluate: Mapping[str, Any],
                       rwth: str | os.PathLike | None = None, progress: bool = False, *,
                       reverse: Path | None = None) -> dict:
    """The record (see the module). `asked`: the suite's explain block (only `sentences`
    applies); `evaluate`, `rwth` and `reverse` (a translation suite's) are not used."""
    settings = {key: asked.get(key, default) for key, default in DEFAULTS.items()}
    run = LanguageModelRun.load(run_dir)
    if not run.reads_with_attention:
        return {"settings": settings, "attention": False}
    data = run.config.data
    if data.test is None:
        raise UserError(f"{run_dir}: no test text to explain on (the run's data.test is unset)")
    encoded = encode_text(read_lines(data.path(data.test)), run.vocab, data.max_len)
    tested = encoded.sentences[: settings["sentences"]]
    with progress_bar(len(tested), "faithfulness", enabled=progress, unit="sentence") as bar:
        summary = faithfulness(run.model, tested, tick=bar.update)
    batch = data.batch_size
    own = sentence_nll(run.model, encoded.sentences, batch_size=batch)
    flat = sentence_nll(run.model, encoded.sentences, uniform_attention=True, batch_size=batch)
    return {"settings": settings, "attention": True, "task": "lm",
            "faithfulness": summary.to_dict(),
            "perplexity": {"own": own, "uniform": flat, "text": str(data.test)}}
