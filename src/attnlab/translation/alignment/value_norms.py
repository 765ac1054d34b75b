"""What each source position contributes to what a decoder reads, as a norm (Kobayashi et al.
2020, "Attention is Not Only a Weight: Analyzing Transformers with Vector Norms"): the context
c_t = sum_j a_tj h_j enters the next layer as W c_t = sum_j a_tj W h_j, so position j's share is
the vector a_tj W h_j, of norm a_tj ||W h_j||. A large weight on a state that W all but erases
moves nothing; the norm-based reading ("attention x value norm", readings.py) links each target
unit to the source unit of the largest such norm. W is the decoder's `context_weight()`: the
context block of Luong's W_c, or of Bahdanau's deep output."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from attnlab.data.vocab import EOS_ID
from attnlab.models import Seq2Seq


@torch.no_grad()
def value_norms(model: Seq2Seq, source_ids: Sequence[int]) -> np.ndarray:
    """||W h_j|| of every source position, "</s>" last as the model reads it: (S,)."""
    weight = model.decoder.context_weight()   # (F, D)
    if weight is None:
        raise ValueError("a decoder without attention has no context to weigh")
    device = weight.device
    src = torch.tensor([[*source_ids, EOS_ID]], device=device)   # (1, S), as collate makes it
    annotations = model.encode(src, torch.ones_like(src, dtype=torch.bool)).annotations[0]
    return (annotations @ weight.T).norm(dim=-1).double().cpu().numpy()   # (S, D) -> (S,)


def norm_weighted(attention: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """||a_tj W h_j|| = a_tj ||W h_j|| (a_tj >= 0): attention (T, S) pieces, norms (S,)."""
    return attention * norms[None, :]
