"""A Transformer's translation in a notebook with its layers and heads (run.heads): the view's
payload carries every layer and head at each level and the choice shown first, `.weights` and
the plain table are the chosen head's, `.grid()` draws every layer x head; in a browser its
saved page offers the layer and head, shows the chosen weights and the grid."""

import numpy as np
import pytest

import attnlab
from attnlab.errors import UserError
from browser import CHROMIUM, CHROMIUM_ARGS, SHOTS, missing_browser
from heads_run import HEADS, LAYERS, transformer_run

from .conftest import DATE

pytestmark = pytest.mark.slow  # trains a run


@pytest.fixture(scope="module")
def translator(tmp_path_factory):
    return attnlab.load(transformer_run(tmp_path_factory.mktemp("transformer")))


@pytest.fixture(scope="module")
def headed(translator):
    return translator.heads(DATE, layer=1, head=2, beam=3, n_best=2)


def test_the_view_carries_every_head_and_shows_the_choice(headed):
    assert headed.heads.shape[:2] == (LAYERS, HEADS)
    np.testing.assert_array_equal(headed.weights, headed.heads[0, 1])
    view = headed._view()
    assert view.payload["choice"] == {"layer": 0, "head": 1}
    for level in view.payload["levels"]:
        for hypothesis in level["hypotheses"]:
            heads = np.asarray(hypothesis["heads"])
            assert heads.shape == (LAYERS, HEADS, len(hypothesis["tokens"]),
                                   len(hypothesis["source_tokens"]))
    best = view.payload["levels"][0]["hypotheses"][0]
    np.testing.assert_allclose(best["attention"], headed.heads[0, 1], atol=1e-5)
    np.testing.assert_allclose(headed.chosen(LAYERS, "mean").weights,
                               headed.heads[-1].mean(0))


def test_the_grid_draws_every_layer_and_head(headed):
    figure = headed.grid()
    titles = [axes.get_title() for axes in figure.axes if axes.get_title()]
    assert titles == [f"layer {layer} · {name}" for layer in range(1, LAYERS + 1)
                      for name in [*(f"head {h}" for h in range(1, HEADS + 1)), "mean"]]


def test_a_choice_out_of_range_is_one_sentence(translator, headed):
    with pytest.raises(UserError, match="--layer 3 is out of range: this model has 2 layers"):
        translator.heads(DATE, layer=3)
    with pytest.raises(UserError, match="--head 5 is out of range"):
        headed.chosen(1, 5)


@pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
def test_the_saved_page_offers_the_layer_and_head(headed, tmp_path):
    from playwright.sync_api import sync_playwright

    path = headed.save_html(tmp_path / "heads.html")
    problems = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.goto(path.as_uri())
        page.wait_for_selector(".attnlab-view[data-ready='true']")
        view = page.locator(".attnlab-view")

        def inside(selector: str):
            return view.locator(selector)

        layer = inside("select[id$='-layer']")
        assert layer.input_value() == "0" and inside("select[id$='-head']").input_value() == "1"
        inside(".row-label[data-row='0']").first.hover()
        shown = inside(".col-label").evaluate_all(
            "nodes => nodes.map(node => Number(node.dataset.weight))")
        assert shown == pytest.approx(headed.heads[0, 1, 0], abs=1e-4)
        inside("select[id$='-head']").select_option("mean")
        inside(".row-label[data-row='0']").first.hover()
        shown = inside(".col-label").evaluate_all(
            "nodes => nodes.map(node => Number(node.dataset.weight))")
        assert shown == pytest.approx(headed.heads[0, :, 0].mean(0), abs=1e-4)
        inside("input[id$='-grid-on']").check()
        assert inside(".heads-panel").count() == LAYERS * (HEADS + 1)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "notebook-heads.png"), full_page=True)
        browser.close()
    assert not problems, problems
