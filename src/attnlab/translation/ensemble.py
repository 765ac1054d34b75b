"""What several trained runs translating as one (attnlab.decode.Ensemble, a TranslationRun with
members) need beyond a single run: their vocabularies checked to be the same, and each member's
own attention of a hypothesis.

    ensemble = TranslationRun.load(["runs/seed-1", "runs/seed-2"])
    ensemble.translate(lines, beam=5)[0].attention           # the members' mean attention
    ensemble.translate(lines, member_attention=True)[0].member_attention   # each member's

The members must have the same vocabularies, checked by content (vocabulary_digest), since a
token id means nothing across vocabularies; the first run's config
gives the decode settings and the data.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from attnlab.data import Vocab, collate
from attnlab.decode import Ensemble, member_attention
from attnlab.errors import CheckpointError

from .corpus import Vocabularies
from .labels import to_numpy
from .translate import TranslationResult

if TYPE_CHECKING:
    from .protocol import TranslatingRun


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


def with_member_attention(run: TranslatingRun, line: str,
                          result: TranslationResult) -> TranslationResult:
    """`result` (of `line`) with each hypothesis's `member_attention`: each member's own (T, S)
    piece attention in member order (None for a member without attention), from a forced
    decode of its tokens; a single model's is [its attention]."""
    if not run.members:
        for hypothesis in result.hypotheses:
            hypothesis.member_attention = [hypothesis.attention]
        return result
    hypotheses = [h for h in result.hypotheses if h.tokens]
    if hypotheses:
        device = next(run.model.parameters()).device
        batch = collate([(run.vocabs.src.encode(line), [])] * len(hypotheses))
        own = member_attention(cast(Ensemble, run.model), batch.src.to(device),
                               batch.src_mask.to(device), [h.tokens for h in hypotheses])
        for hypothesis, weights in zip(hypotheses, own, strict=True):
            hypothesis.member_attention = [None if w is None else to_numpy(w) for w in weights]
    return result
