"""Translate sentences with a trained model (greedy here; beam search lives in attnlab.decode)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attnlab.data import BOS_ID, EOS_ID, collate
from attnlab.models import Seq2Seq

from .config import DecodeConfig
from .corpus import Vocabularies


@dataclass
class Translation:
    """One output: text; the source and target pieces (with </s>); attention (T_tgt, T_src)
    over exactly those pieces, or None for a model without attention."""

    text: str
    source_pieces: list[str]
    target_pieces: list[str]
    attention: np.ndarray | None


def output_length(config: DecodeConfig, source_length: int) -> int:
    return int(config.max_len_ratio * source_length) + config.max_len_extra


@torch.no_grad()
def greedy_translate(model: Seq2Seq, vocabs: Vocabularies, sentences: list[str],
                     config: DecodeConfig) -> list[Translation]:
    """Translate in length-sorted batches; results come back in input order."""
    model.eval()
    device = next(model.parameters()).device
    encoded = [vocabs.src.encode(s) for s in sentences]
    order = sorted(range(len(sentences)), key=lambda i: len(encoded[i]))
    results: list[Translation | None] = [None] * len(sentences)
    for start in range(0, len(order), config.batch_size):
        chunk = order[start : start + config.batch_size]
        batch = collate([(encoded[i], []) for i in chunk]).to(device)
        limit = output_length(config, batch.src.shape[1])
        tokens, attention = model.greedy(batch.src, batch.src_mask, bos_id=BOS_ID,
                                         eos_id=EOS_ID, max_len=limit)
        for row, index in enumerate(chunk):
            weights = None if attention is None else attention[row]
            results[index] = _translation(vocabs, encoded[index], tokens[row], weights)
    return results


def _translation(vocabs: Vocabularies, source_ids: list[int], tokens: torch.Tensor,
                 attention: torch.Tensor | None) -> Translation:
    """Cut one decoded row at EOS (kept as the last piece) and label its attention."""
    ids = tokens.tolist()
    length = ids.index(EOS_ID) + 1 if EOS_ID in ids else len(ids)
    ids = ids[:length]
    text = vocabs.tgt.decode([i for i in ids if i != EOS_ID])
    source_pieces = [vocabs.src.id_to_piece(i) for i in source_ids] + ["</s>"]
    target_pieces = [vocabs.tgt.id_to_piece(i) for i in ids]
    weights = None
    if attention is not None:
        weights = attention[:length, : len(source_pieces)].float().cpu().numpy()
    return Translation(text, source_pieces, target_pieces, weights)
