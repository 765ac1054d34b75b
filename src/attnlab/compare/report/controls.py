"""The explanation page's tables of the faithfulness controls (attnlab.explain.controls,
.eraser, .randomisation), per member, for either kind of attention: the weight each erasure
erased, ERASER's comprehensiveness and sufficiency beside a random ranking's, and the
model-randomisation check of each view. A page passes its own way to print a figure over the
seeds (`Cell`: mean ± sd, or the mean with its 95% interval); a record made before a test
existed gives "-".
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attnlab.explain.methods import LABELS

from ..stats.explanations import Explained, mean_or_zero, sentence_stats, step_stats

# (the seeds' per-sentence statistics or None, their scorer, digits) -> the table's cell
Cell = Callable[[np.ndarray | None, Callable[[np.ndarray], np.ndarray], int], str]
Block = tuple[str, list[list[str]], str]   # a heading, its table, the note under it

ERASED_LABELS = {"top_attention": "top attended", "random": "random other",
                 "top_gradient": "top gradient", "second_attention": "second attended",
                 "random_weighted": "random of weight >= 0.05"}


def _names(members: list[Explained], group: str) -> list[str]:
    """The entries of record["faithfulness"][group] the records hold, in their order."""
    names: dict[str, None] = {}
    for member in members:
        for record in member.records:
            names.update(dict.fromkeys(record["faithfulness"].get(group, {})))
    return list(names)


def weight_rows(members: list[Explained], cell: Cell) -> list[list[str]]:
    """Per member, the mean attention weight of the position each erasure erased."""
    names = _names(members, "erased_weight")
    rows = [["member", *(ERASED_LABELS.get(name, name) for name in names)]]
    for member in members:
        rows.append([member.label, *(cell(step_stats(member, "erased_weight", name,
                                                     per_step=False), mean_or_zero, 3)
                                     for name in names)])
    return rows


def eraser_rows(members: list[Explained], cell: Cell) -> list[list[str]]:
    """Per member, comprehensiveness and sufficiency of attention's ranking and a random one."""
    rankings = _names(members, "comprehensiveness")
    rows = [["member", *(f"{figure}: {ranking}" for figure in ("comprehensiveness",
                                                               "sufficiency")
                         for ranking in rankings)]]
    for member in members:
        rows.append([member.label, *(cell(step_stats(member, figure, ranking), mean_or_zero, 3)
                                     for figure in ("comprehensiveness", "sufficiency")
                                     for ranking in rankings)])
    return rows


def randomisation_rows(members: list[Explained], cell: Cell) -> list[list[str]]:
    """Per member, Kendall's tau between each view and its randomised model's."""
    views = _names(members, "randomisation")
    rows = [["member", *(f"tau: {LABELS.get(view, view)}" for view in views)]]
    for member in members:
        rows.append([member.label, *(cell(sentence_stats(member, "randomisation", view),
                                          mean_or_zero, 2) for view in views)])
    return rows


WEIGHT_NOTE = (
    "The attention weight the erased position held, averaged over the steps: the erasure test "
    "sets the top attended position against a control, and a control that held almost no "
    "weight (a random other position often does; for local attention, one outside the "
    "window holds none) could not have changed the output. The controls of comparable "
    "weight: the second most attended position, and a random one of the others holding at "
    "least 0.05 of the weight (the second most attended where none does).")

ERASER_NOTE = (
    "ERASER (DeYoung et al. 2020) at every tested step: the chosen token's probability minus "
    "its probability with the top k positions' weights zeroed and the rest renormalised "
    "(comprehensiveness: higher, the output needed them), or with their weights alone kept "
    "(sufficiency: lower, they alone keep it), averaged over k = 1, 5, 10, 20 and 50% of the "
    "step's positions (rounded up), the positions ranked by attention or at random. The "
    "positions are taken away from the attention weights, not from the input.")

RANDOMISATION_NOTE = (
    "The model-randomisation check (Adebayo et al. 2018): Kendall's tau per step between the "
    "magnitudes a view gives the positions and those it gives with every weight of the model "
    "drawn afresh (same input, same output), averaged per sentence. Near 0 passes: the view "
    "depends on what training learned; near 1, the view survives without it and explains "
    "nothing of it (a window, a position's place).")


def control_blocks(members: list[Explained], cell: Cell) -> list[Block]:
    """The three tables, each with its heading and note; none the records lack."""
    blocks = [("Erasure: the weight of the position erased", weight_rows(members, cell),
               WEIGHT_NOTE),
              ("ERASER: comprehensiveness and sufficiency against a random ranking",
               eraser_rows(members, cell), ERASER_NOTE),
              ("Model randomisation: each view against the randomised model's",
               randomisation_rows(members, cell), RANDOMISATION_NOTE)]
    return [block for block in blocks if len(block[1][0]) > 1]
