"""A language model in words: `describe` (the few words every report, card, page and log
uses) and `architecture` (the model card's rows)."""

from __future__ import annotations

from attnlab.models import LanguageModelConfig


def describe(model: LanguageModelConfig) -> str:
    """"lstmn / additive" or "lstm (no attention)"."""
    return f"lstmn / {model.score}" if model.kind == "lstmn" else "lstm (no attention)"


def architecture(model: LanguageModelConfig) -> list[tuple[str, str]]:
    """(part, what it is) for the reader."""
    if model.kind == "lstmn":
        reader = f"LSTMN with {model.score} intra-attention (Cheng et al. 2016)"
    else:
        reader = "LSTM (no attention)"
    count = f"{model.layers} layer{'s' if model.layers != 1 else ''}"
    return [("reader", f"{reader}, {count}, embedding {model.embedding_dim}, hidden "
                       f"{model.hidden_dim}")]
