"""Beam search written the slow, obvious way: one sentence at a time, every prefix re-scored by
teacher forcing. It is the specification the batched search is checked against."""

from __future__ import annotations

import torch

from attnlab.attention import as_dense
from attnlab.data import BOS_ID, EOS_ID, PAD_ID
from attnlab.decode import Hypothesis, length_penalty


def next_scores(model, src, mask, prefixes):
    """Log-probabilities (P, V) of the token after each prefix, and the attention (P, T, S) of
    the whole prefix + that token, for one sentence src (1, S)."""
    tgt_in = torch.tensor([[BOS_ID, *prefix] for prefix in prefixes])
    out = model.all_positions(src.expand(len(prefixes), -1), mask.expand(len(prefixes), -1),
                              tgt_in)
    scores = torch.log_softmax(out.logits[:, -1], -1)
    scores[:, [PAD_ID, BOS_ID]] = float("-inf")
    return scores, None if out.attention is None else as_dense(out.attention)


def beam_search_one(model, src, mask, *, beam_size, alpha, max_len, n_best):
    """src (1, S) without padding -> its n_best Hypotheses, following the rules of
    attnlab.decode.beam: rank 2K extensions, finish EOS among the first K, keep K others."""
    beam, finished = [([], 0.0)], []
    with torch.no_grad():
        for length in range(1, max_len + 1):
            scores, attention = next_scores(model, src, mask, [tokens for tokens, _ in beam])
            candidates = sorted(
                ((total + float(scores[b, w]), b, w) for b, (_, total) in enumerate(beam)
                 for w in range(scores.shape[1]) if scores[b, w] > float("-inf")),
                key=lambda c: -c[0])[: 2 * beam_size]
            next_beam = []
            for rank, (total, b, w) in enumerate(candidates):
                tokens = [*beam[b][0], w]
                weights = None if attention is None else attention[b]
                if rank < beam_size and (w == EOS_ID or length == max_len):
                    finished.append(Hypothesis(tokens, total / length_penalty(length, alpha),
                                               total, weights))
                elif w != EOS_ID and len(next_beam) < beam_size:
                    next_beam.append((tokens, total))
            if len(finished) >= beam_size:
                break
            beam = next_beam
    return sorted(finished, key=lambda h: -h.score)[:n_best]
