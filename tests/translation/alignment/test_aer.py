"""AER and its counts: by hand, against Och & Ney's definition written out here, and counts
that give the corpus AER exactly."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.errors import DataError
from attnlab.translation.alignment import AlignmentSet, aer, aer_counts, aer_from_counts

# Sentence: sure (0,0), (1,1); possible-only (1,2).
GOLD = AlignmentSet(sure={(0, 0), (1, 1)}, possible={(1, 2)})
LINKS = st.sets(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=12)
COUNT_LINKS = st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=10)


def test_perfect_alignment_has_zero_aer():
    assert aer([{(0, 0), (1, 1)}], [GOLD]) == 0.0


def test_aer_by_hand():
    # A = {(0,0), (1,2), (2,2)}: |A∩S| = 1, |A∩P| = 2, |A| = 3, |S| = 2 -> 1 - 3/5
    assert aer([{(0, 0), (1, 2), (2, 2)}], [GOLD]) == pytest.approx(0.4)
    # A possible-only link counts in A∩P but not A∩S: 1 - (0 + 1) / (1 + 2)
    assert aer([{(1, 2)}], [GOLD]) == pytest.approx(2 / 3)
    assert aer([{(5, 5)}], [GOLD]) == 1.0


def test_aer_sums_counts_over_the_corpus():
    # Sentence 1: 1 - 3/5 alone; sentence 2: perfect with 1 link. Corpus: 1 - (3+2)/(5+2).
    second = AlignmentSet(sure={(0, 0)}, possible=set())
    value = aer([{(0, 0), (1, 2), (2, 2)}, [(0, 0)]], [GOLD, second])
    assert value == pytest.approx(1 - 5 / 7)


def test_aer_length_mismatch_and_undefined():
    with pytest.raises(DataError, match="2 predicted alignments but 1 gold"):
        aer([set(), set()], [GOLD])
    with pytest.raises(ValueError, match="undefined"):
        aer([set()], [AlignmentSet(sure=set(), possible={(0, 0)})])


def aer_by_definition(pairs):
    """AER written out here from Och & Ney's definition, apart from the library: pairs of
    (predicted links A, sure links S, possible-only links); P is S with the possible-only links,
    and each count is summed over the pairs before `1 - (|A∩S| + |A∩P|) / (|A| + |S|)`."""
    hits = size = 0
    for predicted, sure, extra in pairs:
        predicted, sure = set(predicted), set(sure)
        possible = sure | set(extra)
        hits += len(predicted & sure) + len(predicted & possible)
        size += len(predicted) + len(sure)
    return 1 - hits / size


def test_aer_by_hand_on_a_small_gold():
    # S = {(0,0), (1,1), (2,3)}, possible-only {(2,2), (3,3)}.
    gold = AlignmentSet(sure={(0, 0), (1, 1), (2, 3)}, possible={(2, 2), (3, 3)})
    # A = S and a possible-only link: |A∩S| = 3, |A∩P| = 4, |A| = 4, |S| = 3 -> 1 - 7/7
    assert aer([{(0, 0), (1, 1), (2, 3), (2, 2)}], [gold]) == 0.0
    # A = {(0,0), (1,0), (3,3)}: |A∩S| = 1, |A∩P| = 2, |A| = 3, |S| = 3 -> 1 - 3/6
    assert aer([{(0, 0), (1, 0), (3, 3)}], [gold]) == 0.5
    # A = one sure link: 1 - (1 + 1) / (1 + 3)
    assert aer([{(1, 1)}], [gold]) == 0.5
    # no predicted link at all: 1 - 0 / 3
    assert aer([set()], [gold]) == 1.0
    # A = {(0,0), (1,1), (2,2), (3,3), (4,4), (0,1)}: |A∩S| = 2, |A∩P| = 4, |A| = 6, |S| = 3
    value = aer([{(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (0, 1)}], [gold])
    assert value == pytest.approx(1 / 3)


@given(LINKS, LINKS.filter(bool), LINKS)
def test_aer_is_its_definition_and_sure_gold_scores_zero(predicted, sure, extra):
    gold = AlignmentSet(sure=sure, possible=extra)
    expected = aer_by_definition([(predicted, sure, extra)])
    assert aer([predicted], [gold]) == pytest.approx(expected, abs=1e-12)
    assert 0.0 <= expected <= 1.0
    assert aer([sure], [gold]) == 0.0


@given(st.lists(st.tuples(LINKS, LINKS.filter(bool), LINKS), min_size=1, max_size=5))
def test_corpus_aer_and_its_counts_are_the_definition(pairs):
    predicted = [links for links, _, _ in pairs]
    gold = [AlignmentSet(sure=sure, possible=extra) for _, sure, extra in pairs]
    expected = aer_by_definition(pairs)
    assert aer(predicted, gold) == pytest.approx(expected, abs=1e-12)
    counts = aer_counts(predicted, gold)
    assert aer_from_counts(counts) == pytest.approx(expected, abs=1e-12)
    for (links, sure, extra), row in zip(pairs, counts, strict=True):
        possible = set(sure) | set(extra)
        assert row.tolist() == [len(links & sure), len(links & possible), len(links), len(sure)]


def test_aer_counts_by_hand():
    # as in test_aer_by_hand: |A∩S| = 1, |A∩P| = 2, |A| = 3, |S| = 2; then a perfect pair.
    second = AlignmentSet(sure={(0, 0)}, possible=set())
    counts = aer_counts([{(0, 0), (1, 2), (2, 2)}, [(0, 0)]], [GOLD, second])
    assert counts.dtype == np.int64 and counts.shape == (2, 4)
    assert counts.tolist() == [[1, 2, 3, 2], [1, 1, 1, 1]]
    assert aer_from_counts(counts) == pytest.approx(1 - 5 / 7)
    assert aer_counts([], []).shape == (0, 4)
    with pytest.raises(DataError, match="2 predicted alignments but 1 gold"):
        aer_counts([set(), set()], [GOLD])
    with pytest.raises(ValueError, match="undefined"):
        aer_from_counts(aer_counts([set()], [AlignmentSet(sure=set(), possible={(0, 0)})]))
    with pytest.raises(ValueError, match=r"\(n, 4\)"):
        aer_from_counts(np.zeros((2, 3), dtype=np.int64))


@given(st.lists(st.tuples(COUNT_LINKS, COUNT_LINKS, COUNT_LINKS), min_size=1, max_size=8))
def test_aer_counts_give_aer_exactly(pairs):
    predicted = [links for links, _, _ in pairs]
    gold = [AlignmentSet(sure=sure, possible=possible) for _, sure, possible in pairs]
    counts = aer_counts(predicted, gold)
    for row, links, reference in zip(counts, predicted, gold, strict=True):
        assert row.tolist() == [len(links & reference.sure), len(links & reference.possible),
                                len(links), len(reference.sure)]
    denominator = counts[:, 2].sum() + counts[:, 3].sum()
    if denominator == 0:
        with pytest.raises(ValueError, match="undefined"):
            aer(predicted, gold)
        return
    expected = aer(predicted, gold)
    assert 1 - (counts[:, 0].sum() + counts[:, 1].sum()) / denominator == expected
    assert aer_from_counts(counts) == expected
