"""Training and decoding a local-attention model over a long source never allocate a B x T x S
matrix (issue 25): every storage any operation makes, forward and backward, is watched
(allocations.LargestAllocation). The same runs with dense weights (global attention, and local
attention read densely as before) do build one, so the check can fail."""

import copy

import pytest
import torch

from attnlab.data import EOS_ID, PAD_ID
from attnlab.decode import beam_search, greedy_search
from models.allocations import LargestAllocation
from models.variants import FIRST_WORD, V, translation_model

pytestmark = pytest.mark.slow  # trains and decodes watching every allocation: seconds each

B, S, T = 3, 500, 50  # sentences, source positions, target positions
# Half a (B, T, S) matrix: above anything else these tiny models hold (annotations B x S x 8,
# one returned hypothesis's T x S attention), below any (B, t, S) history with t > T / 2.
LIMIT = B * T * S // 2


def batch():
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(FIRST_WORD, V, (B, S), generator=gen)
    src[:, -1] = EOS_ID
    src[1, S // 2 :] = PAD_ID  # a shorter sentence: padding too
    src[1, S // 2 - 1] = EOS_ID
    tgt_in = torch.randint(FIRST_WORD, V, (B, T), generator=gen)
    tgt_out = torch.randint(FIRST_WORD, V, (B, T), generator=gen)
    return src, src != PAD_ID, tgt_in, tgt_out


def model_of(name, dense=False):
    model = translation_model(name, seed=0)
    with torch.no_grad():  # never EOS: every search runs its whole T steps
        model.decoder.output.proj.bias[EOS_ID] = -1e4
    if dense:  # the decoder reads (B, T, S) weights, as before issue 25
        model = copy.deepcopy(model)
        layer = model.decoder.attention
        layer.compact = layer.forward
    return model


def largest(model):
    """Largest storage (elements) of training (forward, loss, backward), greedy and beam."""
    src, mask, tgt_in, tgt_out = batch()
    tgt_mask = torch.ones(B, T, dtype=torch.bool)
    found = {}
    with LargestAllocation() as watch:
        out = model.train()(src, mask, tgt_in, tgt_mask)
        model.loss(out, tgt_out, tgt_mask).loss.backward()
    found["training"] = watch
    with LargestAllocation() as watch:
        hypotheses = greedy_search(model, src, mask, max_len=T)
    assert [len(h.tokens) for h in hypotheses] == [T] * B
    found["greedy"] = watch
    with LargestAllocation() as watch:
        beam_search(model, src, mask, beam_size=2, max_len=T)
    found["beam"] = watch
    return found


@pytest.mark.parametrize("name", ["luong-nofeed-general-local-p", "bahdanau-general-local-p",
                                  "luong-feed-lstm-additive-local-p", "luong-feed-dot-local-m"])
def test_local_attention_never_builds_a_batch_target_source_matrix(name):
    for run, watch in largest(model_of(name)).items():
        assert watch.elements < LIMIT, f"{run}: {watch.where}"


@pytest.mark.parametrize("name, dense", [("luong-feed-general", False),
                                         ("luong-nofeed-general-local-p", True)])
def test_dense_weights_are_caught(name, dense):
    for run, watch in largest(model_of(name, dense)).items():
        assert watch.elements >= B * T * S, f"{run}: {watch.where}"
