"""A translation model in words: `describe` (the few words every report, card, page and log
uses), `describe_run` (those and what its data holds), and `architecture` (the model card's
rows)."""

from __future__ import annotations

import json
from pathlib import Path

from attnlab.models import ModelConfig

from .config import RunConfig


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


def trained_on(config: RunConfig) -> str | None:
    """What the run's data folder says it holds, in its meta.json's "world" (the dates task
    writes one: "dates of 1000-2099 (50% of them 1950-2049) and 5% not dates"); None when the
    folder is not there or says nothing."""
    try:
        meta = json.loads((Path(config.data.dir) / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    world = meta.get("world") if isinstance(meta, dict) else None
    return world if isinstance(world, str) and world else None


# What the explorer opens with when the run's data is not at hand: a caption-like sentence in
# the source language (Multi30k's domain), none for a language not listed.
EXAMPLES = {"de": "Zwei junge Männer spielen Fußball im Park.",
            "en": "Two young men are playing football in the park.",
            "fr": "Deux jeunes hommes jouent au football dans le parc.",
            "cs": "Dva mladí muži hrají fotbal v parku."}


def example_sentence(config: RunConfig) -> str:
    """A sentence to open the explorer with: the first of the run's validation sources in the
    Latin script when its data folder is here (a date for the dates task: every machine has
    the glyphs), else its first, else one in its source language (EXAMPLES), else ""."""
    from attnlab.data import read_lines
    from attnlab.errors import DataError

    from .corpus import split_path

    try:
        lines = read_lines(split_path(config.data, config.data.valid, config.data.src_lang))
    except (DataError, OSError):
        return EXAMPLES.get(config.data.src_lang, "")
    written = [line for line in lines if line.strip()]
    return next((line for line in written if all(ord(c) < 0x250 for c in line)),
                written[0] if written else "")


def describe_run(config: RunConfig) -> str:
    """"bahdanau / additive, global; trained on dates of 1000-2099 (...)", or `describe` alone
    when the data says nothing of itself."""
    world = trained_on(config)
    return describe(config.model) + (f"; trained on {world}" if world else "")


def layers(count: int) -> str:
    return f"{count} layer{'s' if count != 1 else ''}"


def architecture(model: ModelConfig) -> list[tuple[str, str]]:
    """(part, what it is) for the encoder, the decoder and the attention."""
    encoder, decoder = model.encoder, model.decoder
    if encoder.kind == "lstmn":
        reader = f"LSTMN with {encoder.score} intra-attention (Cheng et al. 2016)"
    elif encoder.kind == "transformer":
        reader = f"Transformer, {encoder.heads} heads, {encoder.positions} " \
                 f"positions, pre-norm (Vaswani et al. 2017)"
    else:
        reader = f"{'bidirectional ' if encoder.bidirectional else ''}{encoder.rnn.upper()}"
    parts = [("encoder", f"{reader}, {layers(encoder.layers)}, embedding "
                         f"{encoder.embedding_dim}, hidden {encoder.hidden_dim}")]
    if decoder.kind == "none":
        parts.append(("decoder", f"{decoder.rnn.upper()} without attention (the final "
                                 f"encoder state only), hidden {decoder.hidden_dim}"))
        return parts
    if decoder.kind == "transformer":
        parts.append(("decoder", f"transformer, {layers(decoder.layers)}, d_model "
                                 f"{decoder.hidden_dim}, {decoder.heads} heads, "
                                 f"{decoder.positions} positions"))
        parts.append(("attention", f"{decoder.attention.describe()}; read: the last layer's "
                                   f"cross-attention averaged over its heads"))
        return parts
    feeding = ", input feeding" if decoder.kind == "luong" and decoder.input_feeding else ""
    parts.append(("decoder", f"{decoder.kind} {decoder.rnn.upper()}, "
                             f"{layers(decoder.layers)}, embedding {decoder.embedding_dim}"
                             f", hidden {decoder.hidden_dim}{feeding}"))
    parts.append(("attention", decoder.attention.describe()))
    return parts
