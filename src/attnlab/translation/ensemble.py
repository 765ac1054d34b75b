"""Several trained runs translating as one (attnlab.decode.Ensemble): `translate`, `evaluate` and
`plot` with several `--run`s, and `attnlab.load` of several paths.

    ensemble = load_ensemble(["runs/seed-1", "runs/seed-2"])
    ensemble.translate(lines, beam=5)[0].attention           # the members' mean attention
    ensemble.translate(lines, member_attention=True)[0].member_attention   # each member's

The members must have the same vocabularies, checked by content (vocabulary_digest), since a
token id means nothing across vocabularies; the first run's config
gives the decode settings and the data.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import torch

from attnlab.data import Vocab, collate
from attnlab.decode import Ensemble, member_attention
from attnlab.errors import CheckpointError, UserError
from attnlab.models import Seq2Seq

from . import loading
from .corpus import Vocabularies
from .labels import to_numpy
from .loading import TrainedRun
from .translate import TranslationResult


def vocabulary_digest(vocab: Vocab) -> str:
    """sha256 of what a vocabulary maps: its kind and, id by id, its piece (and a sentencepiece
    model's score and type). Not of its files: a sentencepiece model file also records the
    temporary folder it was trained in, so two runs with the same vocabulary differ there."""
    digest = hashlib.sha256(f"{vocab.kind}\0".encode())
    processor = getattr(vocab, "processor", None)
    for index in range(len(vocab)):
        digest.update(f"{vocab.id_to_piece(index)}\0".encode())
        if processor is not None:
            digest.update(f"{processor.get_score(index)!r} {processor.is_unknown(index)} "
                          f"{processor.is_control(index)} {processor.is_byte(index)}\0".encode())
    return digest.hexdigest()


def check_same_vocabularies(directories: Sequence[str | os.PathLike]) -> None:
    """CheckpointError (one sentence naming the two runs) unless every run has the first one's
    source and target vocabularies (compared by vocabulary_digest)."""
    def digests(directory: str | os.PathLike) -> dict[str, str]:
        vocabs = Vocabularies.load(Path(directory))
        return {"source": vocabulary_digest(vocabs.src), "target": vocabulary_digest(vocabs.tgt)}

    first = directories[0]
    wanted = digests(first)
    for other in directories[1:]:
        found = digests(other)
        for side in ("source", "target"):
            if found[side] != wanted[side]:
                raise CheckpointError(
                    f"{first} and {other} have different {side} vocabularies, so they cannot "
                    f"be ensembled: an ensemble needs runs trained with the same vocabularies")


@dataclass(repr=False)
class TrainedEnsemble(TrainedRun):
    """Runs decoded together: `model` is their Ensemble, `config`, `vocabs`, `directory`,
    `checkpoint` and `meta` the first member's; members: each TrainedRun, in the given order."""

    members: list[TrainedRun] = field(default_factory=list)

    @property
    def has_attention(self) -> bool:
        return any(member.has_attention for member in self.members)

    @property
    def ensemble(self) -> Ensemble:
        return cast(Ensemble, self.model)

    def quantized(self, kind: str | None) -> TrainedEnsemble:
        if kind is None:
            return self
        members = [member.quantized(kind) for member in self.members]
        return replace(self, model=_as_seq2seq(Ensemble([m.model for m in members])),
                       members=members)

    def translate(self, lines: Sequence[str], *, member_attention: bool = False,
                  **settings: Any) -> list[TranslationResult]:
        """As TrainedRun.translate; member_attention: each result (and alternative) also
        carries `member_attention`, each member's own (T, S) piece attention in member order
        (None for a member without attention), from a forced decode of its tokens."""
        found = super().translate(lines, **settings)
        if member_attention:
            for line, result in zip(lines, found, strict=True):
                self._with_members(line, result)
        return found

    def stream(self, lines: Iterable[str], *, member_attention: bool = False,
               **settings: Any) -> Iterator[TranslationResult]:
        if not member_attention:
            return super().stream(lines, **settings)
        pending: deque[str] = deque()  # lines read, not yet answered (results come in order)

        def remember() -> Iterator[str]:
            for line in lines:
                pending.append(line)
                yield line

        return (self._with_members(pending.popleft(), result)
                for result in super().stream(remember(), **settings))

    def _with_members(self, line: str, result: TranslationResult) -> TranslationResult:
        """The members' own attention of each hypothesis of `line`'s result."""
        hypotheses = [h for h in result.hypotheses if h.tokens]
        if hypotheses:
            device = next(self.model.parameters()).device
            batch = collate([(self.vocabs.src.encode(line), [])] * len(hypotheses))
            own = member_attention(self.ensemble, batch.src.to(device),
                                   batch.src_mask.to(device), [h.tokens for h in hypotheses])
            for hypothesis, weights in zip(hypotheses, own, strict=True):
                hypothesis.member_attention = [None if w is None else to_numpy(w)
                                               for w in weights]
        return result

    def __repr__(self) -> str:
        runs = ", ".join(repr(str(member.directory)) for member in self.members)
        return f"TrainedEnsemble([{runs}], checkpoint={self.checkpoint!r})"


def _as_seq2seq(ensemble: Ensemble) -> Seq2Seq:
    # An Ensemble offers what decoding asks of a Seq2Seq (start, step, all_positions).
    return cast(Seq2Seq, ensemble)


def load_ensemble(directories: Sequence[str | os.PathLike], checkpoint: str | None = None,
                  device: str | torch.device = "cpu") -> TrainedRun:
    """The runs as one TrainedEnsemble (a single run: that TrainedRun), after checking their
    vocabularies; `checkpoint` and `device` as load_run's, for every member."""
    if not directories:
        raise UserError("an ensemble needs at least one run")
    if len(directories) == 1:
        return loading.load_run(directories[0], checkpoint, device)
    check_same_vocabularies(directories)
    members = [loading.load_run(directory, checkpoint, device) for directory in directories]
    first = members[0]
    return TrainedEnsemble(first.directory, first.config, first.vocabs,
                           _as_seq2seq(Ensemble([member.model for member in members])),
                           first.checkpoint, first.meta, members)
