"""Hard (stochastic) attention and its REINFORCE training terms (Xu et al. 2015, sec. 4.1).

In training, each query samples one real key s_t ~ Multinoulli(alpha_t) and the context is that
key's value; with probability `expectation_prob` (0.5 in the paper) the soft expectation is used
instead. The sample is not differentiable: the attention parameters learn through the REINFORCE
term built by `reinforce_loss` from the sample's log-probability and entropy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from .base import AttentionOutput, HardSample, Mechanism, Position
from .global_attention import Attention
from .scores import Score
from .window_weights import as_dense

TINY = 1e-30  # keeps log(alpha) finite where a real key's weight underflowed to 0


class HardAttention(Mechanism):
    """Stochastic hard attention over any score of SCORES.

    HardAttention(score, expectation_prob=0.5, eval_mode="expectation") with a built Score, or
    with a SCORES name and its sizes. forward(query, keys, values=None, mask=None) -> (context,
    weights) like `Attention`; `attend(...)` also returns the `HardSample` needed for
    `reinforce_loss`. In eval mode it is deterministic: the soft
    expectation (`eval_mode="expectation"`, as in Xu et al.'s code) or the value of the most
    likely key (`eval_mode="argmax"`).
    """

    samples = True

    def __init__(self, score: Score | str, *, expectation_prob: float = 0.5,
                 eval_mode: Literal["expectation", "argmax"] = "expectation",
                 **dims: int | float | None):
        super().__init__()
        if not 0.0 <= expectation_prob <= 1.0:
            raise ValueError(
                f"HardAttention: expectation_prob must be in [0, 1], got {expectation_prob}"
            )
        self.set_eval_mode(eval_mode)
        self.soft = Attention(score, **dims)  # the alpha it samples from
        self.expectation_prob = expectation_prob

    @property
    def score(self) -> Score:
        return self.soft.score

    def set_eval_mode(self, mode: Literal["expectation", "argmax"]) -> None:
        if mode not in ("expectation", "argmax"):
            raise ValueError(
                f"HardAttention: eval_mode must be 'expectation' or 'argmax', got {mode!r}"
            )
        self.eval_mode = mode

    def attend_sequence(self, query: Tensor, keys: Tensor, values: Tensor,
                        key_mask: Tensor | None, projected_keys: Tensor,
                        call: Position) -> AttentionOutput:
        soft = self.soft.attend_sequence(query, keys, values, key_mask, projected_keys, call)
        weights = as_dense(soft.weights)  # (B, Tq, Tk): global attention's, dense already
        batch, queries, num_keys = weights.shape
        has_key = weights.sum(-1) > 0  # (B, Tq): queries with at least one real key
        if self.training:
            # multinomial needs a positive row: give key-less queries a dummy uniform row.
            probs = torch.where(has_key.unsqueeze(-1), weights.detach(), 1.0).reshape(-1, num_keys)
            index = torch.multinomial(probs, 1, generator=call.generator).view(batch, queries)
            coins = torch.rand(batch, queries, generator=call.generator, device=query.device)
            expectation = coins < self.expectation_prob
        else:
            index = weights.argmax(-1)
            expectation = torch.full_like(has_key, self.eval_mode == "expectation")
        chosen_value = values.gather(1, index.unsqueeze(-1).expand(-1, -1, values.shape[-1]))
        chosen_value = chosen_value * has_key.unsqueeze(-1)  # (B, Tq, Dv); zero without keys
        context = torch.where(expectation.unsqueeze(-1), soft.context, chosen_value)
        chosen_weight = weights.gather(-1, index.unsqueeze(-1)).squeeze(-1)  # (B, Tq)
        sampled = has_key & ~expectation
        log_prob = torch.where(sampled, chosen_weight.clamp_min(TINY).log(), 0.0)
        entropy = -(weights * weights.clamp_min(TINY).log()).sum(-1)  # (B, Tq)
        return AttentionOutput(context, weights, HardSample(index, log_prob, entropy, expectation))


class MovingAverageBaseline(nn.Module):
    """b_k = decay * b_{k-1} + (1 - decay) * mean log p(y | s~_k, a)  (Xu et al. 2015, sec. 4.1).

    A buffer, so it is saved with the model and a resumed run continues with the same baseline.
    """

    value: Tensor  # b_{k-1}, a buffer
    updates: Tensor  # batches folded in, a buffer

    def __init__(self, decay: float = 0.9):
        super().__init__()
        self.decay = decay
        self.register_buffer("value", torch.zeros(()))
        self.register_buffer("updates", torch.zeros((), dtype=torch.long))

    @torch.no_grad()
    def update(self, log_likelihood: Tensor) -> Tensor:
        """Return the baseline for this batch (b_{k-1}), then fold the batch in.

        log_likelihood (B,) per sequence. The first batch has no history and uses its own mean.
        Using b_{k-1} keeps the baseline independent of the current sample.
        """
        batch_mean = log_likelihood.detach().mean()
        if self.updates == 0:
            self.value.copy_(batch_mean)
        baseline = self.value.clone()  # b_{k-1}
        self.value.mul_(self.decay).add_((1 - self.decay) * batch_mean)
        self.updates += 1
        return baseline


@dataclass
class ReinforceTerms:
    """loss: the scalar to minimise; the parts (batch means) are for logging."""

    loss: Tensor
    log_likelihood: Tensor
    reinforce: Tensor
    entropy: Tensor


def reinforce_loss(
    log_likelihood: Tensor,
    sample_log_prob: Tensor,
    entropy: Tensor,
    baseline: Tensor | float,
    *,
    lambda_r: float = 1.0,
    lambda_e: float = 0.0,
) -> ReinforceTerms:
    """The negated lower bound of Xu et al. 2015, eq. 12, as a loss whose gradient is

        -[grad log p(y|s~,a) + lambda_r (log p(y|s~,a) - b) grad log p(s~|a) + lambda_e grad H[s~]]

    averaged over the batch. All inputs are per sequence (B,): log_likelihood = log p(y | s~, a);
    sample_log_prob = sum_t log p(s~_t | a) and entropy = sum_t H[alpha_t] over real target steps
    (see `HardSample`); baseline b from `MovingAverageBaseline.update`.
    """
    advantage = log_likelihood.detach() - baseline  # (B,): no gradient through the reward
    reinforce = advantage * sample_log_prob
    objective = log_likelihood + lambda_r * reinforce + lambda_e * entropy
    return ReinforceTerms(
        loss=-objective.mean(),
        log_likelihood=log_likelihood.detach().mean(),
        reinforce=reinforce.detach().mean(),
        entropy=entropy.detach().mean(),
    )


@dataclass(frozen=True)
class ReinforceWeights:
    """lambda_r: weight of the REINFORCE term; lambda_e: weight of the entropy bonus."""

    lambda_r: float = 1.0
    lambda_e: float = 0.0


def sequence_reinforce_loss(token_nll: Tensor, mask: Tensor, sample_log_prob: Tensor,
                            entropy: Tensor, baseline: MovingAverageBaseline,
                            weights: ReinforceWeights) -> ReinforceTerms:
    """`reinforce_loss` for a batch of sequences decoded with hard attention.

    token_nll (B, T) -log p(y_t | s~, a), zero at padding; mask (B, T) bool, True = real step;
    sample_log_prob / entropy (B, T): each step's log p(s~_t | a) and H[alpha_t]. Sums over the
    real steps and takes the baseline b_{k-1} from `baseline` (which then folds this batch in).
    """
    log_likelihood = -(token_nll * mask).sum(-1)  # (B,) log p(y | s~, a)
    return reinforce_loss(log_likelihood, (sample_log_prob * mask).sum(-1),
                          (entropy * mask).sum(-1), baseline.update(log_likelihood),
                          lambda_r=weights.lambda_r, lambda_e=weights.lambda_e)
