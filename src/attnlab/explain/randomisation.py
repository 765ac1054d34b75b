"""The model-randomisation sanity check (Adebayo et al. 2018, "Sanity Checks for Saliency
Maps"): an explanation that survives randomising the model's weights explains nothing of what
training put there. For attention and each attribution of any forced reading
(attnlab.explain.forced), at each tested step: Kendall's tau (tau-b, as the agreement test)
between the magnitudes the trained model gives the positions and those a randomised copy
gives them, same input, same forced output. Near 0 passes the check; near 1 means the view
comes from the architecture (a window, a position's place, the input) rather than the weights.

The randomisation is the paper's complete one: every parameter at once, each tensor drawn
afresh (`randomised`), a fresh draw per sentence.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from .faithfulness import step_agreement
from .forced import Forced


@contextlib.contextmanager
def randomised(model: nn.Module, generator: torch.Generator) -> Iterator[None]:
    """Within the block every parameter of `model` is an independent normal draw at the
    tensor's root mean square (its scale kept, what it learned gone; a zero tensor stays zero)
    and every embedding's padding row stays zero (the attributions' baseline); the trained
    values are put back afterwards, whatever happens in the block."""
    trained = [parameter.detach().clone() for parameter in model.parameters()]
    try:
        with torch.no_grad():
            for parameter in model.parameters():
                scale = parameter.detach().double().pow(2).mean().sqrt()
                draw = torch.randn(parameter.shape, generator=generator, dtype=torch.float64)
                parameter.copy_((draw * scale).to(parameter))
            for module in model.modules():
                if isinstance(module, nn.Embedding) and module.padding_idx is not None:
                    module.weight[module.padding_idx].zero_()
        yield
    finally:
        with torch.no_grad():
            for parameter, value in zip(model.parameters(), trained, strict=True):
                parameter.copy_(value)


def views(forced: Forced, methods: Sequence[str], steps: int) -> dict[str, np.ndarray]:
    """Attention (T, K) and each attribution of `methods` (T, K) of the reading, as numpy."""
    return {"attention": attention_view(forced), **attributions(forced, methods, steps)}


def attention_view(forced: Forced) -> np.ndarray:
    """The reading's attention (T, K), as numpy."""
    with torch.no_grad():
        found: np.ndarray = forced.own()[0].double().cpu().numpy()
    return found


def attributions(forced: Forced, methods: Sequence[str], steps: int) -> dict[str, np.ndarray]:
    """Each attribution of `methods` of the reading (T, K): the output's to the input, the same
    whichever attention layer the reading reads."""
    return {method: forced.attribute(method, steps) for method in methods}


def survival(forced: Forced, trained: Mapping[str, np.ndarray], generator: torch.Generator,
             steps: int) -> dict[str, np.ndarray]:
    """Per view of `trained` ("attention" and attribution methods, (T, K) each, the trained
    model's): Kendall's tau at each tested step between its magnitudes and the same view's
    from the model with randomised weights: (n,) each, NaN where either row is constant. A
    reading with no step tested draws nothing."""
    if len(forced.tested()) == 0:
        return {name: np.zeros(0) for name in trained}
    methods = [name for name in trained if name != "attention"]
    with randomised(forced.model, generator):
        after = views(forced, methods, steps)
    return {name: step_agreement(forced, np.abs(values), after[name])
            for name, values in trained.items()}
