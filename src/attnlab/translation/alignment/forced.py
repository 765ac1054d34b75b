"""Forced decoding: the attention a model pays while reading given references (teacher forcing
in eval mode), merged to words. This is what Alignment Error Rate is computed from
(Luong et al. 2015, sec. 5.4): the model's own outputs would not match the gold word indices."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch

from attnlab.data import collate
from attnlab.decode import evaluating, log_probs, row_attention
from attnlab.models import Seq2Seq

from ..corpus import Vocabularies
from ..labels import LabelledAttention, label, sentence_pieces, to_numpy


@dataclass
class ForcedAlignment(LabelledAttention):
    """The model's attention over one (source, reference) pair, plus log p(reference + EOS |
    source). Pieces and words of both sides end with "</s>" (see LabelledAttention)."""

    log_prob: float


def forced_alignment(model: Seq2Seq, vocabs: Vocabularies, sources: list[str],
                     targets: list[str], *, batch_size: int = 64,
                     tick: Callable[[int], None] | None = None) -> list[ForcedAlignment]:
    """Teacher-force each reference in eval mode -> one ForcedAlignment per pair, input order.

    Pairs go in batches sorted by length; tick(n) after each batch of n pairs (a progress
    bar's update). Raises ValueError for a model without attention.
    """
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
    device = next(model.parameters()).device
    pairs = [(vocabs.src.encode(s), vocabs.tgt.encode(t))
             for s, t in zip(sources, targets, strict=True)]
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0]), len(pairs[i][1])))
    results: list[ForcedAlignment | None] = [None] * len(pairs)
    with evaluating(model):
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            found = _align_batch(model, vocabs, [pairs[i] for i in chunk],
                                 [(sources[i], targets[i]) for i in chunk], device)
            for index, alignment in zip(chunk, found, strict=True):
                results[index] = alignment
            if tick is not None:
                tick(len(chunk))
    return cast(list[ForcedAlignment], results)  # every index of `order` filled


def _align_batch(model: Seq2Seq, vocabs: Vocabularies, pairs: list[tuple[list[int], list[int]]],
                 texts: list[tuple[str, str]], device) -> list[ForcedAlignment]:
    """One teacher-forced pass over a batch of encoded pairs and their texts."""
    batch = collate(pairs).to(device)
    # attention (B, T, S), or local attention's windows: densified one pair at a time below
    out = model.all_positions(batch.src, batch.src_mask, batch.tgt_in)
    if out.attention is None:
        raise ValueError("forced alignment needs a model with attention; this decoder has none")
    # an Ensemble's logits are its members' mean log-probabilities already
    scores = out.logits if model.outputs_log_probs else log_probs(out.logits)
    token_scores = scores.gather(-1, batch.tgt_out.unsqueeze(-1)).squeeze(-1)
    totals = torch.where(batch.tgt_mask, token_scores, 0.0).sum(-1).tolist()  # (B,)
    found = []
    for row, ((source, target), (source_text, target_text)) in enumerate(
            zip(pairs, texts, strict=True)):
        weights = to_numpy(row_attention(out.attention, row, len(source) + 1,
                                         steps=len(target) + 1))
        labelled = label(vocabs.src, vocabs.tgt, sentence_pieces(vocabs.src, source_text),
                         sentence_pieces(vocabs.tgt, target_text), weights)
        found.append(ForcedAlignment(**vars(labelled), log_prob=totals[row]))
    return found
