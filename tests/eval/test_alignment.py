"""Pharaoh reading, AER by hand, attention -> links, subword merging, and the RWTH gold file."""

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.errors import DataError
from attnlab.translation.alignment import (
    AlignmentSet,
    aer,
    aer_counts,
    aer_from_counts,
    alignment_from_attention,
    read_links,
)
from attnlab.translation.labels import merge_subwords, word_ids_from_pieces

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_ROOT = Path(os.environ.get("ATTNLAB_DATA", REPO_ROOT.parent / "shared" / "data"))
RWTH = DATA_ROOT / "rwth-deen-gold"

# Sentence: sure (0,0), (1,1); possible-only (1,2).
GOLD = AlignmentSet(sure={(0, 0), (1, 1)}, possible={(1, 2)})


def test_possible_includes_sure():
    assert GOLD.possible == {(0, 0), (1, 1), (1, 2)}
    assert GOLD.sure == {(0, 0), (1, 1)}


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


LINKS = st.sets(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=12)


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


def test_read_links_sure_possible_and_indexing():
    zero = read_links(["0-0 1p2 1-1", "", "3-4 "])
    assert zero[0] == GOLD and zero[1] == AlignmentSet(set(), set())
    assert zero[2].sure == {(3, 4)}
    one = read_links(["1-1 2p3 2-2"], one_indexed=True)
    assert one == [GOLD]


def test_read_links_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.talp"
    path.write_text("1-1 2-2\n3x4\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.talp line 2: cannot read '3x4'"):
        read_links(path)
    with pytest.raises(DataError, match="<lines> line 1: link '0-1' has index 0"):
        read_links(["0-1"], one_indexed=True)
    with pytest.raises(DataError, match="cannot read '-1-2'"):
        read_links(["-1-2"])
    with pytest.raises(DataError, match="cannot read alignment file"):
        read_links(tmp_path / "missing.talp")


@pytest.mark.skipif(
    not (RWTH / "deen.talp").is_file(),
    reason=f"no RWTH gold alignments in {RWTH} (set ATTNLAB_DATA to the shared data folder)",
)
def test_rwth_gold_file_reads_in_de_en_orientation():
    gold = read_links(RWTH / "deen.talp", one_indexed=True)
    assert len(gold) == 508
    assert sum(len(s.sure) for s in gold) > 0
    assert sum(len(s.possible - s.sure) for s in gold) > 0
    pairs = (RWTH / "test.de-en").read_text(encoding="utf-8").splitlines()
    assert len(pairs) == len(gold)
    for line, links in zip(pairs, gold, strict=True):
        german, english = (side.split() for side in line.split(" ||| "))
        # (source i, target j) with German the source: every index lies inside its sentence
        assert all(i < len(german) and j < len(english) for i, j in links.possible)


def test_argmax_and_threshold_alignment():
    weights = np.array([[0.7, 0.2, 0.1],   # target 0 -> source 0
                        [0.1, 0.1, 0.8],   # target 1 -> source 2
                        [0.0, 0.0, 0.0]])  # padded target: no link
    assert alignment_from_attention(weights) == {(0, 0), (2, 1)}
    assert alignment_from_attention(weights, mode="threshold", threshold=0.2) == {
        (0, 0), (1, 0), (2, 1)
    }
    with pytest.raises(ValueError, match="unknown alignment mode 'max'"):
        alignment_from_attention(weights, mode="max")


def test_merge_subwords_by_hand():
    # source pieces [Fuß, ball, spielen] -> words [Fußball, spielen]
    # target pieces [play, ing, soccer] -> words [playing, soccer]
    weights = np.array([[0.2, 0.2, 0.6],
                        [0.0, 0.4, 0.6],
                        [0.5, 0.5, 0.0]])
    merged = merge_subwords(weights, [0, 0, 1], [0, 0, 1])
    np.testing.assert_allclose(merged, [[0.4, 0.6], [1.0, 0.0]])


def test_merge_subwords_keeps_rows_distributions():
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(7), size=9)  # (9 target pieces, 7 source pieces)
    src_words, tgt_words = [0, 0, 1, 2, 2, 2, 3], [0, 1, 1, 1, 2, 3, 3, 4, 4]
    merged = merge_subwords(weights, src_words, tgt_words)
    assert merged.shape == (5, 4)
    np.testing.assert_allclose(merged.sum(axis=1), 1.0)
    # each target word row is the mean of its piece rows, summed within source words
    np.testing.assert_allclose(merged[1, 2], weights[1:4, 3:6].sum(axis=1).mean())


def test_merge_subwords_checks_word_indices():
    with pytest.raises(ValueError, match="source has 2 pieces in weights but 3 word indices"):
        merge_subwords(np.ones((2, 2)), [0, 1, 2], [0, 1])
    with pytest.raises(ValueError, match="no gap"):
        merge_subwords(np.ones((2, 2)), [0, 2], [0, 1])


def test_word_ids_from_sentencepiece_pieces():
    assert word_ids_from_pieces(["\u2581Fuß", "ball", "\u2581spielen", "."]) == [0, 0, 1, 1]
    assert word_ids_from_pieces(["ab", "\u2581c"]) == [0, 1]


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


LINKS = st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=10)


@given(st.lists(st.tuples(LINKS, LINKS, LINKS), min_size=1, max_size=8))
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
