"""forced_alignment: teacher-forced attention per pair, merged to words, for AER."""

import numpy as np
import pytest
import torch

from attnlab.attention import as_dense
from attnlab.data import collate
from attnlab.translation import DecodeConfig, translate
from attnlab.translation.alignment import forced_alignment
from decode.models import tiny, vocabularies

SOURCES = ["ab cde", "g", "fed cba ab", "abc", ""]
TARGETS = ["s t u", "v", "w x", "", "y z"]


@pytest.fixture(scope="module")
def setup():
    return tiny("luong-feed-concat-local-m"), vocabularies()


def test_matches_teacher_forcing_in_input_order(setup):
    model, vocabs = setup
    found = forced_alignment(model, vocabs, SOURCES, TARGETS, batch_size=2)
    model.eval()
    for source, target, alignment in zip(SOURCES, TARGETS, found, strict=True):
        batch = collate([(vocabs.src.encode(source), vocabs.tgt.encode(target))])
        with torch.no_grad():
            out = model.all_positions(batch.src, batch.src_mask, batch.tgt_in)
        np.testing.assert_allclose(alignment.attention, as_dense(out.attention)[0].numpy())
        log_prob = torch.log_softmax(out.logits[0], -1).gather(1, batch.tgt_out.t()).sum()
        assert alignment.log_prob == pytest.approx(float(log_prob))
        assert alignment.source_pieces == [*source, "</s>"]
        assert alignment.target_pieces == [*target.split(), "</s>"]
        assert alignment.source_words == [*source.split(), "</s>"]
        assert alignment.target_words == alignment.target_pieces
        assert alignment.word_attention.shape == (len(target.split()) + 1,
                                                  len(source.split()) + 1)


def test_batch_size_does_not_matter(setup):
    model, vocabs = setup
    one = forced_alignment(model, vocabs, SOURCES, TARGETS, batch_size=1)
    all_ = forced_alignment(model, vocabs, SOURCES, TARGETS, batch_size=64)
    for a, b in zip(one, all_, strict=True):
        np.testing.assert_allclose(a.word_attention, b.word_attention, atol=1e-12)
        assert a.log_prob == pytest.approx(b.log_prob, abs=1e-12)


def test_forcing_a_translation_gives_its_attention(setup):
    model, vocabs = setup
    results = translate(model, vocabs, SOURCES[:4],
                        DecodeConfig(beam=3, alpha=1.0, max_len_ratio=2.0, max_len_extra=20))
    finished = [r.target_pieces[-1:] == ["</s>"] for r in results]
    assert any(finished)
    found = forced_alignment(model, vocabs, SOURCES[:4], [r.text for r in results])
    for result, alignment, ended in zip(results, found, finished, strict=True):
        if ended:  # forcing appends EOS, so only a finished output is forced as it was made
            np.testing.assert_allclose(alignment.attention, result.attention, atol=1e-12)
            assert alignment.log_prob == pytest.approx(result.log_prob, abs=1e-12)


def test_errors(setup):
    model, vocabs = setup
    with pytest.raises(ValueError, match="2 sources but 1 targets"):
        forced_alignment(model, vocabs, ["a", "b"], ["s"])
    with pytest.raises(ValueError, match="attention"):
        forced_alignment(tiny("none"), vocabs, ["a"], ["s"])
