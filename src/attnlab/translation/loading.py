"""A trained run, ready to decode: its config, vocabularies and the `best` or `last` weights.

    run = load_run("runs/bahdanau")              # best checkpoint if there is one, else last
    for result in run.translate(lines, beam=5):  # TranslationResult per line, input order
        print(result.text)
    for result in run.stream(open("big.txt")):   # the same, lazily, a pool at a time

Loading needs only the run directory (config.json, src_vocab.*, tgt_vocab.*, best/ or last/),
never the training data.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import torch

from attnlab.errors import CheckpointError, UserError
from attnlab.models import Seq2Seq, build_model
from attnlab.models.quantize import quantize_int8
from attnlab.train.runs import listed, load_weights, open_run

from .config import DecodeConfig, RunConfig
from .corpus import Vocabularies
from .translate import TranslationResult, iter_translate, translate
from .unknown import UnknownWords, read_dictionary

TASK = "translation"


@dataclass(repr=False)
class TrainedRun:
    """A run directory's model (eval mode, on `device`), vocabularies and config."""

    directory: Path
    config: RunConfig
    vocabs: Vocabularies
    model: Seq2Seq
    checkpoint: str  # "best" or "last": the weights that were loaded
    meta: dict       # the checkpoint's meta.json: step, metrics, ...

    @property
    def has_attention(self) -> bool:
        return self.config.model.decoder.kind != "none"

    @property
    def character_level(self) -> bool:
        """Whether the run reads characters; then a character is its unit of alignment, since
        the gold alignments of such tasks (the dates task) link characters."""
        return self.config.data.vocab == "char"

    def quantized(self, kind: str | None) -> TrainedRun:
        """This run with its model's linear and recurrent layers in `kind` ("int8": dynamic
        quantization, for the CPU; None: the run as it is)."""
        if kind is None:
            return self
        if kind != "int8":
            raise UserError(f"unknown quantization {kind!r}: only int8 is available")
        if next(self.model.parameters()).device.type != "cpu":
            raise UserError("int8 quantization runs on the CPU: give --device cpu")
        return replace(self, model=cast(Seq2Seq, quantize_int8(self.model)))  # a Seq2Seq copy

    def translate(self, lines: Sequence[str], *, beam: int | None = None,
                  n_best: int | None = None, alpha: float | None = None,
                  batch_size: int | None = None, beta: float | None = None,
                  length_penalty: str | None = None, replace_unk: bool = False,
                  dictionary: str | os.PathLike | Mapping[str, str] | None = None
                  ) -> list[TranslationResult]:
        """One TranslationResult per line (text, score, tokens, attention; with n_best > 1 its
        alternatives), in input order, with the run's decode settings unless given (see
        DecodeConfig.overridden: without a beam, the run's widens to n_best; beta: the GNMT
        coverage penalty; length_penalty: gnmt, average or none). replace_unk: each <unk> of
        the text becomes the source unit it attends to most, or its entry in `dictionary` (a
        file of 'source target' lines, or a mapping; see unknown.py), n-best included."""
        decode = self.decode_settings(beam=beam, n_best=n_best, alpha=alpha,
                                      batch_size=batch_size, beta=beta,
                                      length_penalty=length_penalty)
        unknown = self.unknown_words(replace_unk, dictionary)
        found = translate(self.model, self.vocabs, listed(lines, "translate", "lines"), decode)
        return found if unknown is None else [unknown.replace(result) for result in found]

    def stream(self, lines: Iterable[str], *, beam: int | None = None,
               n_best: int | None = None, alpha: float | None = None,
               batch_size: int | None = None, pool_size: int | None = None,
               tick: Callable[[int], None] | None = None, beta: float | None = None,
               length_penalty: str | None = None, replace_unk: bool = False,
               dictionary: str | os.PathLike | Mapping[str, str] | None = None
               ) -> Iterator[TranslationResult]:
        """As translate, lazily: `pool_size` lines are read and decoded at a time (1 answers
        each line as soon as it is read; default 100 batches), so a long file never sits in
        memory whole; tick(n) as each n lines are decoded."""
        decode = self.decode_settings(beam=beam, n_best=n_best, alpha=alpha,
                                      batch_size=batch_size, beta=beta,
                                      length_penalty=length_penalty)
        unknown = self.unknown_words(replace_unk, dictionary)
        found = iter_translate(self.model, self.vocabs, lines, decode, pool_size=pool_size,
                               tick=tick)
        return found if unknown is None else (unknown.replace(result) for result in found)

    def decode_settings(self, **given: Any) -> DecodeConfig:
        """The run's decode settings with those given (DecodeConfig.overridden), checked:
        the coverage penalty needs attention."""
        decode = self.config.decode.overridden(**given)
        decode.penalty()  # an invalid length penalty or a negative beta: one sentence
        if decode.beta and not self.has_attention:
            raise UserError("the coverage penalty (beta) is computed from attention, and this "
                            "model has none")
        return decode

    def unknown_words(self, replace_unk: bool, dictionary: str | os.PathLike
                      | Mapping[str, str] | None) -> UnknownWords | None:
        """The replacement replace_unk asks for (None: none), its dictionary read."""
        if not replace_unk:
            if dictionary is not None:
                raise UserError("a dictionary is for unknown-word replacement: give "
                                "replace_unk (--replace-unk) too")
            return None
        if not self.has_attention:
            raise UserError("unknown-word replacement copies the source word an <unk> attends "
                            "to most, and this model has no attention")
        if dictionary is None or isinstance(dictionary, Mapping):
            return UnknownWords(self.vocabs.src, dict(dictionary or {}))
        return UnknownWords(self.vocabs.src, read_dictionary(dictionary))

    def __repr__(self) -> str:
        return (f"TrainedRun({str(self.directory)!r}, checkpoint={self.checkpoint!r}, "
                f"step={self.meta.get('step', '?')})")


def load_run(directory: str | os.PathLike, checkpoint: str | None = None,
             device: str | torch.device = "cpu") -> TrainedRun:
    """Load a run directory's config, vocabularies and weights (`checkpoint`: "best", "last",
    or None for best-else-last) into a model in eval mode on `device`."""
    run = open_run(directory, RunConfig, checkpoint, task=TASK)
    if not Vocabularies.exist_in(run.path):
        raise CheckpointError(f"run directory {run.path} has no vocabularies "
                              f"(src_vocab.json, tgt_vocab.json)")
    vocabs = Vocabularies.load(run.path)
    model = build_model(run.config.model, len(vocabs.src), len(vocabs.tgt),
                        max_src_len=run.config.data.max_len + 1)
    load_weights(run, model, device=device)
    return TrainedRun(run.path, run.config, vocabs, model, run.checkpoint, run.meta)
