"""The faithfulness tests (attnlab.explain.summary) over a test text, for one LSTMN language
model: each sentence is read as written (its real next words forced), so "the chosen word" at
a step is the word the model finds most likely there.

    summary = faithfulness(model, sentences)     # encoded sentences (ids, no <s> or </s>)
    sentence_nll(model, sentences, uniform=True) # per sentence (nll, tokens), uniform attention
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F

from attnlab.explain.forced import ForcedSentence
from attnlab.explain.intervene import intervening, uniform
from attnlab.explain.summary import FaithfulnessSummary
from attnlab.explain.summary import faithfulness as summarise
from attnlab.models import LanguageModel

from .corpus import collate_text


def faithfulness(model: LanguageModel, sentences: Sequence[Sequence[int]], *, seed: int = 0,
                 tick: Callable[[int], None] | None = None) -> FaithfulnessSummary:
    """Erasure and its controls, permutation, agreement with gradient x input, ERASER and the
    randomisation check (of attention and gradient x input) on each encoded sentence (no
    adversarial search: its record has no such key)."""
    readings = (ForcedSentence.of(model, ids) for ids in sentences)
    summary = summarise(readings, seed=seed, tick=tick)
    summary.agreement.setdefault("gradient", [])   # the key even with no sentence
    return summary


@torch.no_grad()
def sentence_nll(model: LanguageModel, sentences: Sequence[Sequence[int]], *,
                 uniform_attention: bool = False, batch_size: int = 64) -> list[list[float]]:
    """Per sentence, in order, [negative log-likelihood, tokens] of w_1 .. w_n </s> (the tokens
    as perplexity counts them); with `uniform_attention` equal weight on every earlier position
    at every step (Wiegreffe & Pinter 2019). Batched by length."""
    device = next(model.parameters()).device
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    found: list[list[float]] = [[0.0, 0.0] for _ in sentences]
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        batch = collate_text([list(sentences[i]) for i in chunk]).to(device)
        if uniform_attention:
            with intervening(model, uniform):
                logits = model.all_positions(batch.inputs, batch.mask).logits    # (B, T, V)
        else:
            logits = model.all_positions(batch.inputs, batch.mask).logits
        nll = F.cross_entropy(logits.transpose(1, 2), batch.targets, reduction="none")  # (B, T)
        per_sentence = (nll * batch.mask).sum(1).double().tolist()
        for index, value, tokens in zip(chunk, per_sentence, batch.mask.sum(1).tolist(),
                                        strict=True):
            found[index] = [value, float(tokens)]
    return found
