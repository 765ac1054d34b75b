"""Hard (stochastic) attention and the REINFORCE terms of Xu et al. 2015."""

import pytest
import torch

from attnlab.attention import Attention, HardAttention, MovingAverageBaseline, reinforce_loss
from references import attention as ref


def batch(seed=0):
    gen = torch.Generator().manual_seed(seed)
    query, keys = torch.randn(4, 3, 5, generator=gen), torch.randn(4, 6, 5, generator=gen)
    values = torch.randn(4, 6, 2, generator=gen)
    mask = torch.tensor(
        [[True] * 6, [True] * 3 + [False] * 3, [False, True] * 3, [True] + [False] * 5]
    )
    return query, keys, values, mask


@pytest.mark.parametrize("name", ["additive", "dot", "location", "cosine"])
def test_training_returns_one_real_value_per_query(name):
    query, keys, values, mask = batch()
    hard = HardAttention(name, query_dim=5, key_dim=5, max_len=6, expectation_prob=0.0).train()
    for seed in range(5):
        out = hard.attend(query, keys, values, mask, generator=torch.Generator().manual_seed(seed))
        chosen = out.sample.index  # (B, Tq)
        assert torch.all(mask.gather(1, chosen)), "sampled a padded position"
        expected = values.gather(1, chosen.unsqueeze(-1).expand(-1, -1, 2))
        torch.testing.assert_close(out.context, expected)
        chosen_weight = out.weights.gather(-1, chosen.unsqueeze(-1)).squeeze(-1)
        torch.testing.assert_close(out.sample.log_prob, chosen_weight.log())


def test_samples_follow_the_soft_weights():
    query, keys, values, mask = batch()
    hard = HardAttention("general", query_dim=5, key_dim=5, expectation_prob=0.0).train()
    draws = 4000  # copies of the batch in one call: each row samples on its own
    copies = [tensor.repeat(draws, *[1] * (tensor.dim() - 1))
              for tensor in (query, keys, values, mask)]
    index = hard.attend(*copies, generator=torch.Generator().manual_seed(1)).sample.index
    counts = torch.nn.functional.one_hot(index.view(draws, 4, 3), 6).sum(0)  # (B, Tq, Tk)
    weights = hard.attend(query, keys, values, mask).weights.detach()
    # Binomial standard error at 4000 draws is at most 0.008: 0.04 is five of them.
    torch.testing.assert_close(counts / draws, weights, atol=0.04, rtol=0)


def test_soft_weights_are_the_global_attention_reference():
    query, keys, values, mask = batch()
    hard = HardAttention("additive", query_dim=5, key_dim=5).double()
    weights = hard.attend(query.double(), keys.double(), values.double(), mask).weights
    torch.testing.assert_close(weights, ref.hard_distribution_loop(hard, query.double(),
                                                                   keys.double(), mask))


def test_expectation_switch_uses_the_soft_context():
    query, keys, values, mask = batch()
    hard = HardAttention("dot", query_dim=5, key_dim=5, expectation_prob=1.0).train()
    soft = Attention("dot", query_dim=5, key_dim=5)
    out = hard.attend(query, keys, values, mask)
    torch.testing.assert_close(out.context, soft(query, keys, values, mask)[0])
    assert torch.all(out.sample.expectation) and torch.all(out.sample.log_prob == 0)


def test_half_of_the_queries_use_the_expectation_by_default():
    hard = HardAttention("dot", query_dim=5, key_dim=5).train()
    query, keys, values, mask = batch()
    gen = torch.Generator().manual_seed(0)
    share = torch.stack([hard.attend(query, keys, values, mask, generator=gen).sample.expectation
                         for _ in range(200)]).float().mean()
    assert 0.45 < share < 0.55


@pytest.mark.parametrize("mode", ["expectation", "argmax"])
def test_eval_mode_is_deterministic(mode):
    query, keys, values, mask = batch()
    hard = HardAttention("additive", query_dim=5, key_dim=5, eval_mode=mode).eval()
    first = hard(query, keys, values, mask)
    for _ in range(3):
        torch.testing.assert_close(hard(query, keys, values, mask), first)
    if mode == "argmax":
        index = first[1].argmax(-1)
        chosen = values.gather(1, index.unsqueeze(-1).expand(-1, -1, 2))
        torch.testing.assert_close(first[0], chosen)


def test_attention_learns_only_through_the_reinforce_term():
    query, keys, values, mask = batch()
    hard = HardAttention("additive", query_dim=5, key_dim=5, expectation_prob=0.0).train()
    readout = torch.nn.Linear(2, 1)

    def attention_grad(lambda_r):
        hard.zero_grad()
        out = hard.attend(query, keys, values, mask, generator=torch.Generator().manual_seed(0))
        log_likelihood = readout(out.context).squeeze(-1).sum(-1)  # (B,) a stand-in log p(y|s,a)
        terms = reinforce_loss(log_likelihood, out.sample.log_prob.sum(-1),
                               out.sample.entropy.sum(-1), baseline=0.0, lambda_r=lambda_r)
        terms.loss.backward()
        return torch.cat([p.grad.flatten() if p.grad is not None else torch.zeros(p.numel())
                          for p in hard.parameters()])

    assert torch.all(attention_grad(lambda_r=0.0) == 0)
    assert attention_grad(lambda_r=1.0).abs().sum() > 0


def test_reinforce_loss_gradient_is_the_papers_estimator():
    log_likelihood = torch.tensor([-2.0, -5.0, -1.0], requires_grad=True)
    sample_log_prob = torch.tensor([-0.5, -1.5, -0.1], requires_grad=True)
    entropy = torch.tensor([0.7, 0.2, 1.1], requires_grad=True)
    baseline, lambda_r, lambda_e = -3.0, 0.5, 0.1
    terms = reinforce_loss(log_likelihood, sample_log_prob, entropy, baseline,
                           lambda_r=lambda_r, lambda_e=lambda_e)
    terms.loss.backward()
    n = 3
    torch.testing.assert_close(log_likelihood.grad, torch.full((3,), -1.0 / n))
    advantage = torch.tensor([-2.0, -5.0, -1.0]) - baseline
    torch.testing.assert_close(sample_log_prob.grad, -lambda_r * advantage / n)
    torch.testing.assert_close(entropy.grad, torch.full((3,), -lambda_e / n))


def test_moving_average_baseline():
    baseline = MovingAverageBaseline(decay=0.9)
    assert baseline.update(torch.tensor([-4.0, -2.0])).item() == pytest.approx(-3.0)
    assert baseline.update(torch.tensor([-1.0])).item() == pytest.approx(-3.0)  # b_{k-1}
    assert baseline.value.item() == pytest.approx(0.9 * -3.0 + 0.1 * -1.0)
    assert "value" in baseline.state_dict()
