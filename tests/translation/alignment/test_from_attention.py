"""Links from attention: the argmax and threshold links of a weight matrix."""

import numpy as np
import pytest

from attnlab.translation.alignment import alignment_from_attention, from_attention


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


def test_the_share_on_the_end_of_the_source_is_the_mean_of_its_column_over_real_targets():
    from attnlab.translation.labels import LabelledAttention

    # Two target words and "</s>" over two source words and "</s>": rows 0 and 1 put 0.6 and
    # 0.2 on "</s>" (the "</s>" row's own 0.9 is not a target word's).
    weights = np.array([[0.3, 0.1, 0.6], [0.1, 0.7, 0.2], [0.05, 0.05, 0.9]])
    labelled = LabelledAttention(["a", "b", "</s>"], ["x", "y", "</s>"], weights,
                                 ["a", "b", "</s>"], ["x", "y", "</s>"], weights)
    assert from_attention.end_share(labelled) == pytest.approx(0.4)
    assert from_attention.end_share(labelled, characters=True) == pytest.approx(0.4)
    bare = LabelledAttention(["a", "b"], ["x"], weights[:1, :2], ["a", "b"], ["x"],
                             weights[:1, :2])
    assert from_attention.end_share(bare) is None        # no "</s>" to measure
