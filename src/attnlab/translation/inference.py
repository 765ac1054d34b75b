"""Translate sentences with a trained model, using the run's decode settings."""

from __future__ import annotations

from attnlab.decode import TranslationResult, translate
from attnlab.models import Seq2Seq

from .config import DecodeConfig
from .corpus import Vocabularies


def translate_sentences(
    model: Seq2Seq, vocabs: Vocabularies, sentences: list[str], config: DecodeConfig, *,
    beam: int | None = None,
) -> list[TranslationResult]:
    """Beam search with `config` (beam size `beam` if given); results in input order."""
    return translate(model, vocabs, sentences, beam_size=beam or config.beam, alpha=config.alpha,
                     max_len_ratio=config.max_len_ratio, max_len_extra=config.max_len_extra,
                     batch_size=config.batch_size)


def greedy_translate(model: Seq2Seq, vocabs: Vocabularies, sentences: list[str],
                     config: DecodeConfig) -> list[TranslationResult]:
    """Greedy decoding (beam 1), as validation during training uses."""
    return translate_sentences(model, vocabs, sentences, config, beam=1)
