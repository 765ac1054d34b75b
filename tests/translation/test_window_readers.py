"""The readers of a decoder's attention accept local attention's windows (issue 25): guided
alignment's loss, forced alignment and translation (labelled attention, unknown-word
replacement) give what they give from the same model reading dense weights."""

import copy

import numpy as np
import pytest
import torch

from attnlab.attention import WindowWeights, as_dense
from attnlab.data import UNK_ID, collate
from attnlab.train.config import GuidedAlignmentConfig
from attnlab.translation import DecodeConfig, translate
from attnlab.translation.alignment import forced_alignment
from attnlab.translation.guided import CorpusGuide
from attnlab.translation.unknown import UnknownWords
from decode.models import tiny, vocabularies

# Sources several windows long (D = 1 and 2); `dense_up_to = 0` reads even short ones by windows.
SOURCES = ["ab cde fg", "gfedcba", "fed cba ab", "abc abc ab"]
TARGETS = ["s t u", "v", "w x y z", "t"]


def reading_densely(model):
    """A copy of model whose decoder reads dense (B, T, S) weights, as before issue 25."""
    dense = copy.deepcopy(model)
    layer = dense.decoder.attention
    layer.compact = layer.forward
    return dense


@pytest.fixture(scope="module", params=["luong-feed-concat-local-m", "bahdanau-general-local-p"])
def models(request):
    model = tiny(request.param)
    model.decoder.attention.mechanism.dense_up_to = 0  # windows only, even on short sources
    return model, reading_densely(model), vocabularies()


@pytest.mark.parametrize("cost", ["ce", "mse"])
def test_guided_alignment_loss_reads_windows(models, cost):
    model, _, vocabs = models
    batch = collate([(vocabs.src.encode(s), vocabs.tgt.encode(t))
                     for s, t in zip(SOURCES, TARGETS, strict=True)])
    links = [torch.tensor([[0, 0], [1, 2], [2, 3]]), torch.tensor([[0, 4]]),
             torch.zeros(0, 2, dtype=torch.long), torch.tensor([[1, 1], [1, 2]])]
    guide = CorpusGuide(GuidedAlignmentConfig("links.txt", weight=0.5, cost=cost), links)
    out = model.train()(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_mask)
    assert isinstance(out.attention, WindowWeights)
    windows = guide.loss(out.attention, [0, 1, 2, 3])
    dense = guide.loss(as_dense(out.attention).detach().requires_grad_(True), [0, 1, 2, 3])
    torch.testing.assert_close(windows, dense.detach())
    model.zero_grad()
    windows.backward()  # the guide's gradient reaches the attention through the windows
    assert any(p.grad is not None and p.grad.abs().sum() > 0
               for p in model.decoder.attention.parameters())


def test_forced_alignment_reads_windows(models):
    model, dense, vocabs = models
    found = forced_alignment(model, vocabs, SOURCES, TARGETS, batch_size=3)
    expected = forced_alignment(dense, vocabs, SOURCES, TARGETS, batch_size=3)
    for got, want in zip(found, expected, strict=True):
        np.testing.assert_array_equal(got.attention, want.attention)
        np.testing.assert_array_equal(got.word_attention, want.word_attention)
        assert got.log_prob == want.log_prob


def test_translation_and_unknown_words_read_windows(models):
    model, dense, vocabs = models
    config = DecodeConfig(beam=3, alpha=1.0, beta=0.3, n_best=2, max_len_ratio=2.0,
                          max_len_extra=5)
    found, expected = (translate(m, vocabs, SOURCES, config) for m in (model, dense))
    replace = UnknownWords(vocabs.src)
    for got, want in zip(found, expected, strict=True):
        assert got.tokens == want.tokens and got.score == want.score
        np.testing.assert_array_equal(got.attention, want.attention)
        np.testing.assert_array_equal(got.word_attention, want.word_attention)
        for other, ref in zip(got.hypotheses, want.hypotheses, strict=True):
            np.testing.assert_array_equal(other.attention, ref.attention)
        got.tokens = want.tokens = [UNK_ID, *got.tokens[1:]]  # an <unk> to copy for
        assert replace.copy(got, 0) == replace.copy(want, 0)
