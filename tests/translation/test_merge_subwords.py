"""merge_subwords by hand and against a slow, obvious reference (loops over pieces, one word at a
time); word_ids_from_pieces."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.translation.labels import merge_subwords, word_ids_from_pieces


def merge_loop(weights, source_ids, target_ids):
    """The specification: a word's source pieces summed, a word's target pieces averaged."""
    words_out = max(target_ids, default=-1) + 1
    words_in = max(source_ids, default=-1) + 1
    merged = np.zeros((words_out, words_in))
    for target_word in range(words_out):
        rows = [j for j, word in enumerate(target_ids) if word == target_word]
        for source_word in range(words_in):
            cols = [i for i, word in enumerate(source_ids) if word == source_word]
            total = sum(weights[j][i] for j in rows for i in cols)
            merged[target_word, source_word] = total / len(rows)
    return merged


@st.composite
def word_indices(draw, max_pieces=9, ordered=True):
    """Word index of each piece covering 0..W-1 with no gap; in reading order, or shuffled."""
    pieces = draw(st.integers(0, max_pieces))
    if pieces == 0:
        return []
    starts = draw(st.lists(st.booleans(), min_size=pieces - 1, max_size=pieces - 1))
    ids = np.cumsum([0, *starts]).tolist()
    return ids if ordered else draw(st.permutations(ids))


@given(word_indices(), word_indices(), st.booleans(), st.integers(0, 2**32 - 1))
def test_matches_the_loop_reference(source_ids, target_ids, float32, seed):
    rng = np.random.default_rng(seed)
    weights = rng.random((len(target_ids), len(source_ids)))
    weights = weights.astype(np.float32) if float32 else weights
    merged = merge_subwords(weights, source_ids, target_ids)
    assert merged.dtype == np.float64
    np.testing.assert_allclose(merged, merge_loop(weights.astype(float), source_ids, target_ids),
                               rtol=1e-12, atol=1e-15)


@given(word_indices(ordered=False), word_indices(ordered=False), st.integers(0, 2**32 - 1))
def test_pieces_of_a_word_need_not_be_neighbours(source_ids, target_ids, seed):
    weights = np.random.default_rng(seed).random((len(target_ids), len(source_ids)))
    np.testing.assert_allclose(merge_subwords(weights, source_ids, target_ids),
                               merge_loop(weights, source_ids, target_ids), rtol=1e-12,
                               atol=1e-15)


def test_one_piece_per_word_is_the_identity():
    weights = np.random.default_rng(0).random((4, 6))
    np.testing.assert_array_equal(merge_subwords(weights, range(6), range(4)), weights)


def test_empty_sides_keep_their_shape():
    assert merge_subwords(np.zeros((0, 3)), [0, 0, 1], []).shape == (0, 2)
    assert merge_subwords(np.zeros((2, 0)), [], [0, 1]).shape == (2, 0)


@pytest.mark.parametrize("ids", [[-1, 0], [1, 1]])
def test_negative_or_gapped_indices_are_refused(ids):
    with pytest.raises(ValueError, match="no gap"):
        merge_subwords(np.ones((2, 2)), ids, [0, 1])


def test_memory_is_linear_in_the_weights():
    """A 1 x 200,000 piece row merged to 100,000 words: a one-hot (pieces, words) matrix would
    take 160 GB; the merge needs a few copies of the row."""
    import tracemalloc

    pieces = 200_000
    weights = np.full((1, pieces), 1.0 / pieces)
    tracemalloc.start()
    merged = merge_subwords(weights, np.arange(pieces) // 2, [0])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert merged.shape == (1, pieces // 2) and merged.sum() == pytest.approx(1.0)
    assert peak < 20 * weights.nbytes


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
