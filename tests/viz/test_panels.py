"""Weight matrices in a grid (an explanation's panels): weights drawn as they are, signed
matrices row-scaled, two panels a row on white, one colour bar under them."""
import numpy as np

from attnlab.viz import panel_grid, row_scaled
from attnlab.viz.heatmap import figure_to_array, matrix_figure
from attnlab.viz.panels import GAP, colour_bar, panel, pixels

ROWS, COLUMNS = ["a", "b", "</s>"], ["x", "y", "z", "</s>"]


def test_row_scaled_is_each_rows_magnitude_over_its_largest():
    values = np.array([[-2.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    assert row_scaled(values).tolist() == [[1.0, 0.5, 0.0], [0.0, 0.0, 0.0]]
    assert row_scaled(np.zeros((0, 3))).shape == (0, 3)


def test_the_panels_lie_in_rows_of_two_with_one_colour_bar_on_white():
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(4), size=3)
    signed = rng.normal(size=(3, 4))
    views = {"attention": weights, "gradient": signed, "erasure": signed}
    canvas = panel_grid(views, ROWS, COLUMNS, weights=("attention",))
    first = panel(weights, "attention", ROWS, COLUMNS, weights=True,
                  axis_names=("source pieces", "output pieces"))
    second = panel(signed, "gradient", ROWS, COLUMNS, weights=False,
                   axis_names=("source pieces", "output pieces"))
    bar = colour_bar(canvas.shape[1])
    assert canvas.dtype == np.uint8 and canvas.shape[2] == 3
    assert canvas.shape[1] == max(first.shape[1] + GAP + second.shape[1], bar.shape[1])
    assert (canvas[: first.shape[0], : first.shape[1]] == first).all()
    assert (canvas[: second.shape[0], first.shape[1] + GAP:][:, : second.shape[1]]
            == second).all()
    assert (canvas[:, first.shape[1] : first.shape[1] + GAP][: first.shape[0]] == 255).all()
    # the third view starts a second row; the colour bar closes the figure
    below = max(first.shape[0], second.shape[0]) + GAP
    third = panel(signed, "erasure", ROWS, COLUMNS, weights=False,
                  axis_names=("source pieces", "output pieces"))
    assert (canvas[below : below + third.shape[0], : third.shape[1]] == third).all()
    assert canvas.shape[0] == below + third.shape[0] + GAP + bar.shape[0]
    blue = canvas[: first.shape[0], : first.shape[1]].astype(int)
    assert (blue[..., 2] >= blue[..., 0]).all()           # Blues: never redder than blue
    bigger = panel(weights, "attention", ROWS, COLUMNS, weights=True,
                   axis_names=("source pieces", "output pieces"), scale=2.0)
    assert bigger.shape[0] > 1.5 * first.shape[0]


def test_pixels_at_scale_1_are_the_heatmaps_own():
    figure = matrix_figure(np.eye(3), ROWS, COLUMNS[:3])
    assert (pixels(figure) == figure_to_array(figure)).all()
