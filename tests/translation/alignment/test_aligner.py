"""Symmetrisation by hand and by property, and the eflomal baseline's AER on a toy corpus and
on the RWTH gold set."""

import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.data import read_lines
from attnlab.errors import UserError
from attnlab.translation.alignment import (
    METHODS,
    AlignmentSet,
    GoldSet,
    aligner_aer,
    rwth_gold,
    symmetrise,
)
from shared_data import missing

REPO_ROOT = Path(__file__).resolve().parents[3]
DATA_ROOT = Path(os.environ.get("ATTNLAB_DATA", REPO_ROOT.parent / "shared" / "data"))
RWTH = DATA_ROOT / "rwth-deen-gold"
MULTI30K = DATA_ROOT / "multi30k"
NO_EFLOMAL = "eflomal is not installed (pip install 'attnlab[aligner]')"

# Intersection {(0,0), (1,1)}. (2,2): forward only, a corner of (1,1), both words free -> grown.
# (0,1): reverse only, next to (0,0) but both its words aligned -> never chosen.
# (4,5): forward only, isolated, both words free -> FINAL and FINAL-AND.
# (5,0): reverse only, isolated, target 0 taken by (0,0) -> FINAL only.
FORWARD = {(0, 0), (1, 1), (2, 2), (4, 5)}
REVERSE = {(0, 0), (1, 1), (0, 1), (5, 0)}
BY_HAND = {
    "intersection": {(0, 0), (1, 1)},
    "grow-diag": {(0, 0), (1, 1), (2, 2)},
    "grow-diag-final-and": {(0, 0), (1, 1), (2, 2), (4, 5)},
    "grow-diag-final": {(0, 0), (1, 1), (2, 2), (4, 5), (5, 0)},
    "union": {(0, 0), (1, 1), (2, 2), (4, 5), (0, 1), (5, 0)},
}


@pytest.mark.parametrize("method", sorted(BY_HAND))
def test_symmetrise_by_hand(method):
    assert symmetrise(FORWARD, REVERSE, method) == BY_HAND[method]


def test_default_is_grow_diag_final_and():
    assert symmetrise(FORWARD, REVERSE) == BY_HAND["grow-diag-final-and"]


def test_grow_diag_spreads_along_a_chain_and_sideways():
    # (1,1) touches the intersection, (2,2) only (1,1); (0,1) is a sideways 1-to-2 link.
    forward = {(0, 0), (1, 1), (2, 2)}
    reverse = {(0, 0), (0, 1)}
    assert symmetrise(forward, reverse, "grow-diag") == {(0, 0), (0, 1), (1, 1), (2, 2)}
    # Far from the intersection nothing grows: (3,3) needs a FINAL step.
    assert symmetrise({(0, 0), (3, 3)}, {(0, 0)}, "grow-diag") == {(0, 0)}


def test_final_and_is_not_always_inside_final():
    # FINAL takes (0,3) and (3,0), which then block (3,3); FINAL-AND takes only (3,3).
    forward, reverse = {(0, 0), (0, 3), (3, 0), (3, 3)}, {(0, 0)}
    assert symmetrise(forward, reverse, "grow-diag-final") == {(0, 0), (0, 3), (3, 0)}
    assert symmetrise(forward, reverse, "grow-diag-final-and") == {(0, 0), (3, 3)}


def test_unknown_method_names_the_options():
    with pytest.raises(UserError, match="grow-diag-final-and"):
        symmetrise(FORWARD, REVERSE, "grow")


links = st.sets(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=20)


@given(links, links)
def test_symmetrisations_nest(forward, reverse):
    result = {method: symmetrise(forward, reverse, method) for method in METHODS}
    assert result["intersection"] <= result["grow-diag"]
    for final in ("grow-diag-final", "grow-diag-final-and"):
        assert result["grow-diag"] <= result[final] <= result["union"]
    assert result["union"] == forward | reverse


@given(links, links)
def test_final_steps_leave_no_union_link_with_free_words(forward, reverse):
    final = symmetrise(forward, reverse, "grow-diag-final")
    final_and = symmetrise(forward, reverse, "grow-diag-final-and")
    for source, target in forward | reverse:
        # FINAL aligns every word the union aligns; FINAL-AND at least one word of each link.
        assert any(s == source for s, _ in final) and any(t == target for _, t in final)
        assert any(s == source or t == target for s, t in final_and)


def toy_corpus(pairs=200, seed=0):
    """Sentences over 30 words; the target maps each word to its own word ("w7" -> "V7"),
    swaps each adjacent pair of positions, and capitalises its first word. Gold: sure links."""
    rng = random.Random(seed)
    sources, targets, golds = [], [], []
    for _ in range(pairs):
        words = [rng.randrange(30) for _ in range(rng.randint(3, 10))]
        order = [i ^ 1 if i ^ 1 < len(words) else i for i in range(len(words))]
        target = [f"v{words[i]}" for i in order]
        target[0] = target[0].upper()
        sources.append(" ".join(f"w{w}" for w in words))
        targets.append(" ".join(target))
        golds.append(AlignmentSet(sure={(i, j) for j, i in enumerate(order)}, possible=set()))
    return sources, targets, golds


def test_toy_corpus_is_aligned_almost_perfectly():
    pytest.importorskip("eflomal", reason=NO_EFLOMAL)
    sources, targets, golds = toy_corpus()
    gold = GoldSet("toy", sources[:50], targets[:50], golds[:50])
    score = aligner_aer(gold, list(zip(sources[50:], targets[50:], strict=True)),
                        extra_name="toy")
    assert score.aer < 0.1
    assert score.pairs == 50 and score.skipped == 0
    assert score.name == ("eflomal (both directions, grow-diag-final-and, lowercased) on toy "
                          "+ 150 toy pairs")
    assert "not attention" in score.format()


def test_missing_eflomal_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "eflomal", None)  # makes `import eflomal` fail
    sources, targets, golds = toy_corpus(pairs=3)
    with pytest.raises(UserError, match=r"^the aligner baseline needs eflomal: "
                                        r"pip install 'attnlab\[aligner\]'$"):
        aligner_aer(GoldSet("toy", sources, targets, golds))


def test_unknown_method_fails_before_training():
    sources, targets, golds = toy_corpus(pairs=3)
    with pytest.raises(UserError, match="unknown symmetrisation method"):
        aligner_aer(GoldSet("toy", sources, targets, golds), method="diag")


@pytest.mark.skipif(
    not (RWTH / "deen.talp").is_file(),
    reason=missing("rwth-deen-gold"),
)
def test_rwth_gold_with_some_multi30k():
    pytest.importorskip("eflomal", reason=NO_EFLOMAL)
    extra = []
    if (MULTI30K / "train.de.gz").is_file():
        german = read_lines(MULTI30K / "train.de.gz")[:3000]
        english = read_lines(MULTI30K / "train.en.gz")[:3000]
        extra = list(zip(german, english, strict=True))
    score = aligner_aer(rwth_gold(RWTH), extra, extra_name="Multi30k")
    assert score.pairs == 508
    assert score.aer < 0.6


def test_both_directions_turns_the_reverse_links_round_and_joins_them():
    from attnlab.explain.methods import REVERSE
    from attnlab.translation.alignment.readings import READINGS

    # Forward attention, rows = 3 target units over 3 source units: argmax 0, 1, 1.
    forward = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.2, 0.5, 0.3]])
    # The reverse model's, rows = source units over target units: argmax 0, 1, 2.
    backward = np.array([[0.9, 0.05, 0.05], [0.1, 0.7, 0.2], [0.1, 0.2, 0.7]])
    views = {"attention": forward, "reverse": backward}
    found = {name: READINGS[name].links(views, (3, 3)) for name in
             (REVERSE, "attention, both directions intersected",
              "attention, both directions grow-diag-final")}
    assert found[REVERSE] == {(0, 0), (1, 1), (2, 2)}            # (source, target)
    assert found["attention, both directions intersected"] == {(0, 0), (1, 1)}
    # Grown: the links of either next to a shared one whose word is not linked yet.
    assert found["attention, both directions grow-diag-final"] == {(0, 0), (1, 1), (1, 2),
                                                                 (2, 2)}
