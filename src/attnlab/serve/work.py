"""What the worker thread runs: a batch of checked requests in, one JSON-ready answer per
request out (or the RequestError that request earned). A task's endpoint is its Run's
answer_batch (a translation run decodes a batch in one beam search, a captioning run its
images together); an explanation is one sentence's, within its time budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from attnlab.errors import UserError

from .budget import OverBudget, within
from .problems import RequestError, invalid, too_large
from .runs import ServedRun

if TYPE_CHECKING:
    from attnlab.translation import DecodeConfig

    from .schemas import ExplainRequest


def answer_batch(run: ServedRun, requests: list) -> list[dict | RequestError]:
    """The Run's answers to requests of its endpoint that share a batch key; a UserError is
    a 422 naming what was wrong."""
    return [invalid(str(found)) if isinstance(found, UserError) else found
            for found in run.loaded.answer_batch(requests)]


def explain_batch(run: ServedRun, decode: DecodeConfig, budget_s: float,
                  requests: list[ExplainRequest]) -> list[dict | RequestError]:
    """The Run's explanation of each request (to_dict: pieces, log_probs and every view),
    each stopped with a 413 once it has taken `budget_s` seconds."""
    answers: list[dict | RequestError] = []
    for request in requests:
        try:
            # the worker runs without gradients; attribution needs them
            with within(run.loaded.model, budget_s), torch.enable_grad():
                found = run.loaded.explain(request.text, request.target,
                                           methods=request.methods, steps=request.steps,
                                           decode=decode)
        except OverBudget:
            answers.append(too_large(
                f"the explanation took longer than this server's {budget_s:g} s for one; ask "
                f"for fewer methods or integrated-gradients steps, or a shorter sentence"))
        except UserError as error:
            answers.append(invalid(str(error)))
        else:
            answers.append(found.to_dict())
    return answers
