"""`attnlab plot --layer/--head/--heads-grid` on a tiny Transformer run: the chosen head and the
grid are drawn, a bad choice is one line naming the valid range, and a run whose attention has
no heads refuses the options in one line."""

import pytest
from PIL import Image

from attnlab.cli import main
from heads_run import LAYERS, transformer_run

pytestmark = pytest.mark.slow  # trains a run


@pytest.fixture(scope="module")
def heads_run(tmp_path_factory):
    return transformer_run(tmp_path_factory.mktemp("transformer"))


def plot(capsys, *args):
    code = main(["plot", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_chosen_head_and_the_grid_are_drawn(heads_run, tmp_path, capsys):
    shown = {}
    for name, options in [("default", []), ("head", ["--layer", 1, "--head", 2]),
                          ("mean", ["--layer", 1, "--head", "mean"])]:
        output = tmp_path / f"{name}.png"
        code, out, _ = plot(capsys, "--run", heads_run, "3 March 1999", "--output", output,
                            *options)
        assert code == 0 and f"heatmap: {output}" in out
        shown[name] = Image.open(output).convert("L")
    assert shown["head"].tobytes() != shown["default"].tobytes()  # another head drawn
    grid = tmp_path / "grid.png"
    code, out, _ = plot(capsys, "--run", heads_run, "3 March 1999", "--heads-grid", "--output",
                        grid)
    assert code == 0 and f"heads grid: {grid}" in out
    # a grid of LAYERS rows of panels is taller than one heatmap of the same sentence
    assert Image.open(grid).size[1] > shown["default"].size[1]


@pytest.mark.parametrize("options, said", [
    (["--layer", 3], "--layer 3 is out of range: this model has 2 layers, 1 to 2"),
    (["--head", 0], "--head 0 is out of range: this model has 2 heads, 1 to 2"),
    (["--head", "all"], "--head must be a number or mean, not 'all'"),
    (["--heads-grid", "--layer", 1], "--heads-grid draws every layer and head: give it "
                                     "without --layer and --head"),
])
def test_a_bad_choice_is_one_line(options, said, heads_run, tmp_path, capsys):
    assert LAYERS == 2
    code, _, err = plot(capsys, "--run", heads_run, "3 March 1999", "--output",
                        tmp_path / "x.png", *options)
    assert code == 2 and err.count("\n") == 1 and said in err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("options", [["--layer", 2], ["--head", 1], ["--heads-grid"]])
def test_a_run_without_heads_refuses_them(options, dates_run, tmp_path, capsys):
    code, _, err = plot(capsys, "--run", dates_run, "3 March 1999", "--output",
                        tmp_path / "x.png", *options)
    assert code == 2 and err.count("\n") == 1
    assert "this model's attention has no layers or heads" in err
