"""Weight matrices side by side (an explanation's panels): weights drawn as they are, signed
matrices row-scaled, the panels in a row on white."""

import numpy as np

from attnlab.viz import panels_side_by_side, row_scaled
from attnlab.viz.heatmap import figure_to_array, matrix_figure
from attnlab.viz.panels import GAP, panel, pixels

ROWS, COLUMNS = ["a", "b", "</s>"], ["x", "y", "z", "</s>"]


def test_row_scaled_is_each_rows_magnitude_over_its_largest():
    values = np.array([[-2.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    assert row_scaled(values).tolist() == [[1.0, 0.5, 0.0], [0.0, 0.0, 0.0]]
    assert row_scaled(np.zeros((0, 3))).shape == (0, 3)


def test_the_panels_lie_side_by_side_on_white():
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(4), size=3)
    signed = rng.normal(size=(3, 4))
    canvas = panels_side_by_side({"attention": weights, "gradient": signed}, ROWS, COLUMNS,
                                 weights=("attention",))
    first = panel(weights, "attention", ROWS, COLUMNS, weights=True,
                  axis_names=("source pieces", "output pieces"))
    second = panel(signed, "gradient", ROWS, COLUMNS, weights=False,
                   axis_names=("source pieces", "output pieces"))
    assert canvas.dtype == np.uint8 and canvas.shape[2] == 3
    assert canvas.shape[1] == first.shape[1] + GAP + second.shape[1]
    assert (canvas[: first.shape[0], : first.shape[1]] == first).all()
    assert (canvas[:, first.shape[1] : first.shape[1] + GAP] == 255).all()
    bigger = panel(weights, "attention", ROWS, COLUMNS, weights=True,
                   axis_names=("source pieces", "output pieces"), scale=2.0)
    assert bigger.shape[0] > 1.5 * first.shape[0]


def test_pixels_at_scale_1_are_the_heatmaps_own():
    figure = matrix_figure(np.eye(3), ROWS, COLUMNS[:3])
    assert (pixels(figure) == figure_to_array(figure)).all()
