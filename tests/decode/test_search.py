"""Greedy and beam search: against a slow reference, beam 1 == greedy, batch independence, each
hypothesis's own attention, n-best and EOS/length rules, for every decoder and attention kind."""

import pytest
import torch

from attnlab.attention import as_dense
from attnlab.data import BOS_ID, EOS_ID, PAD_ID
from attnlab.decode import beam_search, greedy_search, length_penalty

from .models import NAMES, limit, sources, tiny
from .reference import beam_search_one

ATTENTIVE = sorted(set(NAMES) - {"none"})


def real(src, mask, row):
    """One sentence of a padded batch without its padding: (1, S_real) tokens and mask."""
    length = int(mask[row].sum())
    return src[row : row + 1, :length], mask[row : row + 1, :length]


def assert_same(found, expected, tolerance=1e-10):
    assert [h.tokens for h in found] == [h.tokens for h in expected]
    for got, want in zip(found, expected, strict=True):
        assert got.score == pytest.approx(want.score, abs=tolerance)
        assert got.log_prob == pytest.approx(want.log_prob, abs=tolerance)
        if want.attention is None:
            assert got.attention is None
        else:
            torch.testing.assert_close(got.attention, want.attention, atol=tolerance, rtol=0)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_matches_the_one_sentence_reference(name):
    model, (src, mask) = tiny(name), sources(lengths=(4, 1, 6))
    found = beam_search(model, src, mask, beam_size=3, alpha=0.7, max_len=limit, n_best=3)
    model.eval()
    for row, hypotheses in enumerate(found):
        one_src, one_mask = real(src, mask, row)
        expected = beam_search_one(model, one_src, one_mask, beam_size=3, alpha=0.7,
                                   max_len=limit(one_src.shape[1]), n_best=3)
        assert_same(hypotheses, expected)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_beam_one_is_greedy(name):
    model, (src, mask) = tiny(name), sources()
    greedy = greedy_search(model, src, mask, max_len=limit, alpha=0.6)
    beam = beam_search(model, src, mask, beam_size=1, alpha=0.6, max_len=limit)
    assert_same([hypotheses[0] for hypotheses in beam], greedy, tolerance=1e-12)
    assert any(h.tokens[-1] == EOS_ID for h in greedy)
    assert any(len(h.tokens) > 1 for h in greedy)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_a_sentence_does_not_depend_on_its_batch(name):
    model, (src, mask) = tiny(name), sources()
    search = dict(beam_size=4, alpha=1.0, max_len=limit, n_best=4)
    together = beam_search(model, src, mask, **search)
    alone = [beam_search(model, *real(src, mask, row), **search)[0] for row in range(len(src))]
    in_sevens = [hyps for start in (0, 7) for hyps in
                 beam_search(model, src[start : start + 7], mask[start : start + 7], **search)]
    for row, expected in enumerate(together):
        assert_same(alone[row], expected, tolerance=1e-5)
        assert_same(in_sevens[row], expected, tolerance=1e-5)


@pytest.mark.parametrize("name", ATTENTIVE)
def test_attention_and_log_prob_are_the_hypothesis_own(name):
    """Teacher forcing of each returned hypothesis gives its attention rows and log_prob."""
    model, (src, mask) = tiny(name), sources()
    found = beam_search(model, src, mask, beam_size=3, max_len=limit, n_best=3)
    model.eval()
    with torch.no_grad():
        for row, hypotheses in enumerate(found):
            one_src, one_mask = real(src, mask, row)
            for hypothesis in hypotheses:
                tokens = torch.tensor([hypothesis.tokens])
                tgt_in = torch.cat([torch.tensor([[BOS_ID]]), tokens[:, :-1]], 1)
                out = model.all_positions(one_src, one_mask, tgt_in)
                assert hypothesis.attention.shape == (len(hypothesis.tokens), one_src.shape[1])
                torch.testing.assert_close(hypothesis.attention, as_dense(out.attention)[0])
                log_prob = torch.log_softmax(out.logits[0], -1).gather(1, tokens.t()).sum()
                assert hypothesis.log_prob == pytest.approx(float(log_prob), abs=1e-10)


def test_no_attention_model_returns_none():
    model, (src, mask) = tiny("none"), sources(lengths=(2, 3))
    for hypotheses in beam_search(model, src, mask, beam_size=2, max_len=4, n_best=2):
        assert all(h.attention is None for h in hypotheses)


@pytest.mark.parametrize("name", ["luong-feed-general", "bahdanau-lstm-additive-hard"])
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_n_best_rules(name, alpha):
    """Distinct, sorted by score = log_prob / lp; EOS only last; limits respected; an output
    without EOS has exactly its limit."""
    model, (src, mask) = tiny(name), sources()
    found = beam_search(model, src, mask, beam_size=5, alpha=alpha, max_len=limit, n_best=5)
    hit_limit = 0
    for hypotheses, length in zip(found, mask.sum(-1).tolist(), strict=True):
        assert 1 <= len(hypotheses) <= 5
        assert len({tuple(h.tokens) for h in hypotheses}) == len(hypotheses)
        scores = [h.score for h in hypotheses]
        assert scores == sorted(scores, reverse=True)
        for h in hypotheses:
            assert h.score == pytest.approx(h.log_prob / length_penalty(len(h.tokens), alpha))
            assert EOS_ID not in h.tokens[:-1] and BOS_ID not in h.tokens
            assert PAD_ID not in h.tokens
            assert len(h.tokens) <= limit(length)
            if h.tokens[-1] != EOS_ID:
                assert len(h.tokens) == limit(length)
                hit_limit += 1
    assert hit_limit > 0


def test_output_limit_of_one_token_and_fixed_limits():
    model, (src, mask) = tiny("luong-nofeed-dot"), sources(lengths=(3, 5))
    for hypotheses in beam_search(model, src, mask, beam_size=3, max_len=1, n_best=3):
        assert [len(h.tokens) for h in hypotheses] == [1, 1, 1]
    assert all(len(h.tokens) == 1 for h in greedy_search(model, src, mask, max_len=1))
    with pytest.raises(ValueError, match="max_len"):
        beam_search(model, src, mask, beam_size=2, max_len=lambda n: n - 10)
    with pytest.raises(ValueError, match="n_best"):
        beam_search(model, src, mask, beam_size=2, max_len=3, n_best=3)


def test_keys_projected_once_and_done_sentences_leave_the_batch(monkeypatch):
    model, (src, mask) = tiny("luong-feed-general"), sources()
    layer, decoder = model.decoder.attention, model.decoder
    projections, rows = [], []
    project, step = layer.mechanism.project_keys, decoder.step
    monkeypatch.setattr(layer.mechanism, "project_keys",
                        lambda keys: projections.append(keys.shape[0]) or project(keys))
    monkeypatch.setattr(decoder, "step",
                        lambda tokens, state: rows.append(len(tokens)) or step(tokens, state))
    beam_search(model, src, mask, beam_size=3, max_len=limit)
    assert projections == [len(src)]  # once, per sentence, not per beam or per step
    assert rows[0] == 3 * len(src) and rows[-1] < rows[0]
    assert rows == sorted(rows, reverse=True) and len(set(rows)) > 2, rows


def test_training_mode_is_restored_and_dropout_is_off():
    model, (src, mask) = tiny("luong-feed-concat-local-m"), sources(lengths=(4, 2))
    first = beam_search(model, src, mask, beam_size=2, max_len=6)
    assert model.training
    second = beam_search(model, src, mask, beam_size=2, max_len=6)
    for a, b in zip(first, second, strict=True):
        assert_same(a, b, tolerance=0.0)
