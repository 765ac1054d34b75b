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

from .core import as_query_sequence
from .global_attention import Attention

TINY = 1e-30  # keeps log(alpha) finite where a real key's weight underflowed to 0


@dataclass
class HardSample:
    """What one hard-attention call drew; every field is (B, Tq).

    index: the chosen key (sampled in training, argmax in eval); log_prob: log alpha at index,
    0 where the expectation was used or the query had no real key; entropy: H[alpha_t];
    expectation: True where the soft expectation replaced the sample.
    """

    index: Tensor
    log_prob: Tensor
    entropy: Tensor
    expectation: Tensor


@dataclass
class HardAttentionOutput:
    """context (B, Tq, Dv); weights (B, Tq, Tk) the soft alpha sampled from; sample: HardSample."""

    context: Tensor
    weights: Tensor
    sample: HardSample


class HardAttention(nn.Module):
    """Stochastic hard attention over any score of SCORES.

    forward(query, keys, values=None, mask=None) -> (context, weights) like `Attention`; use
    `sample(...)` to also get the `HardSample` needed for `reinforce_loss`. In eval mode it is
    deterministic: the soft expectation (`eval_mode="expectation"`, as in Xu et al.'s code) or the
    value of the most likely key (`eval_mode="argmax"`).
    """

    def __init__(
        self,
        score: str,
        *,
        query_dim: int,
        key_dim: int,
        hidden_dim: int | None = None,
        max_len: int | None = None,
        sharpness: float | None = None,
        expectation_prob: float = 0.5,
        eval_mode: Literal["expectation", "argmax"] = "expectation",
    ):
        super().__init__()
        if not 0.0 <= expectation_prob <= 1.0:
            raise ValueError(
                f"HardAttention: expectation_prob must be in [0, 1], got {expectation_prob}"
            )
        if eval_mode not in ("expectation", "argmax"):
            raise ValueError(
                f"HardAttention: eval_mode must be 'expectation' or 'argmax', got {eval_mode!r}"
            )
        self.soft = Attention(
            score, query_dim=query_dim, key_dim=key_dim, hidden_dim=hidden_dim,
            max_len=max_len, sharpness=sharpness,
        )
        self.expectation_prob, self.eval_mode = expectation_prob, eval_mode

    @property
    def score(self):
        return self.soft.score

    def project_keys(self, keys: Tensor) -> Tensor:
        return self.soft.project_keys(keys)

    def sample(
        self,
        query: Tensor,
        keys: Tensor,
        values: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        projected_keys: Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> HardAttentionOutput:
        """Like forward, plus the sample; query (B, Tq, Dq) or (B, Dq). See HardAttentionOutput."""
        query, is_step = as_query_sequence(query, f"HardAttention({self.score.name!r})")
        values = keys if values is None else values
        soft_context, weights = self.soft(query, keys, values, mask, projected_keys=projected_keys)
        batch, queries, num_keys = weights.shape
        has_key = weights.sum(-1) > 0  # (B, Tq): queries with at least one real key
        if self.training:
            # multinomial needs a positive row: give key-less queries a dummy uniform row.
            probs = torch.where(has_key.unsqueeze(-1), weights.detach(), 1.0).reshape(-1, num_keys)
            index = torch.multinomial(probs, 1, generator=generator).view(batch, queries)
            coins = torch.rand(batch, queries, generator=generator, device=query.device)
            expectation = coins < self.expectation_prob
        else:
            index = weights.argmax(-1)
            expectation = torch.full_like(has_key, self.eval_mode == "expectation")
        chosen_value = values.gather(1, index.unsqueeze(-1).expand(-1, -1, values.shape[-1]))
        chosen_value = chosen_value * has_key.unsqueeze(-1)  # (B, Tq, Dv); zero without keys
        context = torch.where(expectation.unsqueeze(-1), soft_context, chosen_value)
        chosen_weight = weights.gather(-1, index.unsqueeze(-1)).squeeze(-1)  # (B, Tq)
        sampled = has_key & ~expectation
        log_prob = torch.where(sampled, chosen_weight.clamp_min(TINY).log(), 0.0)
        entropy = -(weights * weights.clamp_min(TINY).log()).sum(-1)  # (B, Tq)
        sample = HardSample(index, log_prob, entropy, expectation)
        if is_step:
            sample = HardSample(*(field.squeeze(1) for field in vars(sample).values()))
            return HardAttentionOutput(context.squeeze(1), weights.squeeze(1), sample)
        return HardAttentionOutput(context, weights, sample)

    def forward(
        self,
        query: Tensor,
        keys: Tensor,
        values: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        projected_keys: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        out = self.sample(query, keys, values, mask, projected_keys=projected_keys)
        return out.context, out.weights


class MovingAverageBaseline(nn.Module):
    """b_k = decay * b_{k-1} + (1 - decay) * mean log p(y | s~_k, a)  (Xu et al. 2015, sec. 4.1).

    A buffer, so it is saved with the model and a resumed run continues with the same baseline.
    """

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
