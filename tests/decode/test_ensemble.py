"""Ensembles: of one model, and of two copies of one model, they are that model (tokens, scores,
attention); each step scores by the members' mean log-probabilities (forced decode); with two
different members every beam reorders both states, so each found hypothesis has the mean
log-probability and the mean attention its tokens get by teacher forcing."""

import copy

import pytest
import torch

from attnlab.attention import as_dense
from attnlab.data import BOS_ID
from attnlab.decode import (
    Ensemble,
    Penalty,
    beam_search,
    greedy_search,
    member_attention,
    next_token_scores,
)

from .models import NAMES, limit, sources, tiny
from .test_search import assert_same

ATTENTIVE = sorted(set(NAMES) - {"none"})
SEARCH = dict(beam_size=3, max_len=limit, n_best=3, penalty=Penalty(alpha=0.7, beta=0.2))


def searches(model, src, mask, search=SEARCH):
    penalty = search["penalty"] if model_attends(model) else Penalty(alpha=0.7)
    return (beam_search(model, src, mask, **{**search, "penalty": penalty}),
            greedy_search(model, src, mask, max_len=limit, penalty=penalty))


def model_attends(model):
    members = model.members if isinstance(model, Ensemble) else [model]
    return all(member.decoder.__class__.__name__ != "PlainDecoder" for member in members)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_an_ensemble_of_one_model_is_that_model(name):
    model, (src, mask) = tiny(name), sources()
    beam, greedy = searches(model, src, mask)
    ensemble_beam, ensemble_greedy = searches(Ensemble([model]), src, mask)
    for got, want in zip(ensemble_beam, beam, strict=True):
        assert_same(got, want, tolerance=0.0)
    assert_same(ensemble_greedy, greedy, tolerance=0.0)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_an_ensemble_of_two_copies_of_one_model_is_that_model(name):
    model, (src, mask) = tiny(name), sources()
    beam, greedy = searches(model, src, mask)
    twins = Ensemble([model, copy.deepcopy(model)])
    twin_beam, twin_greedy = searches(twins, src, mask)
    for got, want in zip(twin_beam, beam, strict=True):
        assert_same(got, want, tolerance=1e-12)
    assert_same(twin_greedy, greedy, tolerance=1e-12)


def forced(model, src, mask, tokens):
    """Step `model` through tokens (B, T) (inputs BOS + tokens[:-1]) -> scores (B, T, V)."""
    inputs = torch.cat([tokens.new_full((tokens.shape[0], 1), BOS_ID), tokens[:, :-1]], 1)
    model.eval()
    with torch.no_grad():
        state, scores = model.start(src, mask), []
        for t in range(tokens.shape[1]):
            logits, _, state = model.step(inputs[:, t], state)
            scores.append(logits if isinstance(model, Ensemble) else next_token_scores(logits))
    return torch.stack(scores, 1)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_each_step_scores_by_the_members_mean_log_probabilities(name):
    first, second = tiny(name, seed=0), tiny(name, seed=1)
    src, mask = sources()
    tokens = torch.randint(4, 12, (src.shape[0], 5), generator=torch.Generator().manual_seed(3))
    ensemble = forced(Ensemble([first, second]), src, mask, tokens)
    mean = (forced(first, src, mask, tokens) + forced(second, src, mask, tokens)) / 2
    torch.testing.assert_close(ensemble, mean, atol=1e-12, rtol=0)
    assert not torch.allclose(forced(first, src, mask, tokens)[:, :, 4:],
                              forced(second, src, mask, tokens)[:, :, 4:])
    # teacher forcing agrees: all_positions' scores are the same means
    tgt_in = torch.cat([tokens.new_full((tokens.shape[0], 1), BOS_ID), tokens[:, :-1]], 1)
    with torch.no_grad():
        out = Ensemble([first, second]).eval().all_positions(src, mask, tgt_in)
    torch.testing.assert_close(out.logits[:, :, 4:], mean[:, :, 4:], atol=1e-10, rtol=0)


def teacher_forced(model, src, mask, tokens):
    """Summed log-probability and attention (T, S_real) of one hypothesis's tokens."""
    tgt_in = torch.tensor([[BOS_ID, *tokens[:-1]]])
    with torch.no_grad():
        out = model.eval().all_positions(src, mask, tgt_in)
    scores = torch.log_softmax(out.logits[0].double(), -1)
    log_prob = float(scores[torch.arange(len(tokens)), torch.tensor(tokens)].sum())
    attention = None if out.attention is None else as_dense(out.attention)[0, :, : int(mask.sum())]
    return log_prob, attention


@pytest.mark.parametrize("name", ATTENTIVE)
def test_a_beam_of_two_members_follows_both_states(name):
    members = [tiny(name, seed=0), tiny(name, seed=1)]
    src, mask = sources()
    found = beam_search(Ensemble(members), src, mask, **SEARCH)
    for row, hypotheses in enumerate(found):
        length = int(mask[row].sum())
        one_src, one_mask = src[row : row + 1, :length], mask[row : row + 1, :length]
        rows = [row] * len(hypotheses)  # one source row per hypothesis
        own = member_attention(Ensemble(members), src[rows], mask[rows],
                               [h.tokens for h in hypotheses])
        for hypothesis, each in zip(hypotheses, own, strict=True):
            forced_members = [teacher_forced(m, one_src, one_mask, hypothesis.tokens)
                              for m in members]
            mean_log_prob = sum(log_prob for log_prob, _ in forced_members) / 2
            assert hypothesis.log_prob == pytest.approx(mean_log_prob, abs=1e-9)
            mean_attention = (forced_members[0][1] + forced_members[1][1]) / 2
            torch.testing.assert_close(hypothesis.attention, mean_attention, atol=1e-10, rtol=0)
            for got, (_, want) in zip(each, forced_members, strict=True):
                torch.testing.assert_close(got, want, atol=1e-10, rtol=0)


def test_members_with_other_vocabulary_sizes_are_refused():
    src, mask = sources()
    with pytest.raises(ValueError, match="different target vocabulary sizes"):
        greedy_search(Ensemble([tiny("bahdanau-additive"),
                                tiny("bahdanau-additive", tgt_vocab=9)]), src, mask, max_len=3)
