"""A time budget for model work that cannot be stopped from outside (an attribution is
thousands of forward passes inside captum): while `within(model, seconds)` holds, every module
of the model checks the clock before it runs, so work past its deadline stops at the next layer
with OverBudget. Nothing is left half changed: captum removes its own hooks and restores the
model as the exception passes through it, and these hooks are removed on the way out."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from torch import nn


class OverBudget(Exception):
    """The work ran past its deadline; `seconds` was its budget."""

    def __init__(self, seconds: float):
        super().__init__(f"past the budget of {seconds:g} s")
        self.seconds = seconds


@contextlib.contextmanager
def within(model: nn.Module, seconds: float) -> Iterator[None]:
    """Raise OverBudget from the first module `model` runs after `seconds` from now."""
    deadline = time.monotonic() + seconds

    def check(module: nn.Module, inputs: object) -> None:
        if time.monotonic() > deadline:
            raise OverBudget(seconds)

    handles = [module.register_forward_pre_hook(check) for module in model.modules()]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
