"""A translation model in words: `describe` (the few words every report, card, page and log
uses) and `architecture` (the model card's rows)."""

from __future__ import annotations

from attnlab.models import ModelConfig


def describe(model: ModelConfig) -> str:
    """"bahdanau / additive, global", "luong / general, local-p (D=10); lstmn encoder /
    additive", "none (no attention)"."""
    decoder, encoder = model.decoder, model.encoder
    if decoder.kind == "none":
        text = "none (no attention)"
    else:
        text = f"{decoder.kind} / {decoder.attention.describe()}"
    if encoder.kind == "lstmn":
        text += f"; lstmn encoder / {encoder.score}"
    return text


def layers(count: int) -> str:
    return f"{count} layer{'s' if count != 1 else ''}"


def architecture(model: ModelConfig) -> list[tuple[str, str]]:
    """(part, what it is) for the encoder, the decoder and the attention."""
    encoder, decoder = model.encoder, model.decoder
    if encoder.kind == "lstmn":
        reader = f"LSTMN with {encoder.score} intra-attention (Cheng et al. 2016)"
    else:
        reader = f"{'bidirectional ' if encoder.bidirectional else ''}{encoder.rnn.upper()}"
    parts = [("encoder", f"{reader}, {layers(encoder.layers)}, embedding "
                         f"{encoder.embedding_dim}, hidden {encoder.hidden_dim}")]
    if decoder.kind == "none":
        parts.append(("decoder", f"{decoder.rnn.upper()} without attention (the final "
                                 f"encoder state only), hidden {decoder.hidden_dim}"))
        return parts
    feeding = ", input feeding" if decoder.kind == "luong" and decoder.input_feeding else ""
    parts.append(("decoder", f"{decoder.kind} {decoder.rnn.upper()}, "
                             f"{layers(decoder.layers)}, embedding {decoder.embedding_dim}"
                             f", hidden {decoder.hidden_dim}{feeding}"))
    parts.append(("attention", decoder.attention.describe()))
    return parts
