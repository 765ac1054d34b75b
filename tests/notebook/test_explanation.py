"""An explanation (run.explain) draws in a notebook as the explorer's translation view with its
switch between attention and each attribution: the payload holds them all (each attribution
signed, to 5 significant digits), a console gets a table of links, and in a
browser the switch redraws the cells with no request. Made-up explanations (no model) but one
trained tiny run's for the real thing."""

import json
import re

import numpy as np
import pytest

import attnlab
from attnlab.explain.attribution import METHODS
from attnlab.explain.explanation import Explanation
from attnlab.viz.notebook import view_of
from attnlab.viz.notebook.shrink import MAX_SIDE
from browser import CHROMIUM, CHROMIUM_ARGS, SHOTS, missing_browser

from .conftest import DATE
from .test_payload import embedded

SOURCE = [*"5 mars 2003", "</s>"]
TARGET = [*"2003-03-05", "</s>"]


def made_up(source=SOURCE, target=TARGET, attention=True, seed=0) -> Explanation:
    """An explanation with random views: attention row-stochastic, attributions signed."""
    rng = np.random.default_rng(seed)
    shape = (len(target), len(source))
    views = {}
    if attention:
        weights = rng.random(shape) ** 8
        views["attention"] = weights / weights.sum(axis=1, keepdims=True)
    for method in METHODS:
        views[method] = rng.normal(0, 0.01, shape)
    return Explanation("".join(source[:-1]), "".join(target[:-1]), list(source), list(target),
                       views, log_probs=list(rng.uniform(-1, 0, len(target))))


def test_the_payload_holds_every_view_of_the_same_output():
    found = made_up()
    payload = found._view().payload
    assert payload["kind"] == "translation" and payload["view"] == "attention"
    assert payload["attributions"] == list(METHODS)
    hypothesis = payload["levels"][0]["hypotheses"][0]
    assert (hypothesis["tokens"], hypothesis["source_tokens"]) == (TARGET, SOURCE)
    assert hypothesis["text"] == "2003-03-05"
    assert hypothesis["score"] == pytest.approx(sum(found.log_probs))
    np.testing.assert_allclose(hypothesis["attention"], found.views["attention"], atol=1e-5)
    explanation = payload["explanation"]
    assert (explanation["target_pieces"], explanation["source_pieces"]) == (TARGET, SOURCE)
    assert list(explanation["views"]) == list(METHODS)
    for method in METHODS:  # signed, to 5 significant digits (they can be any size)
        np.testing.assert_allclose(explanation["views"][method], found.views[method], rtol=1e-4)
    assert json.loads(embedded(found._repr_html_())) == json.loads(json.dumps(payload))


def test_without_attention_the_view_opens_on_the_first_attribution():
    payload = made_up(attention=False)._view().payload
    assert payload["view"] == "gradient"
    assert payload["levels"][0]["hypotheses"][0]["attention"] is None


def test_a_console_gets_each_views_links():
    found = made_up()
    text = repr(view_of(found))
    lines = text.splitlines()
    assert lines[0] == "“5 mars 2003” → “2003-03-05”"
    assert lines[1].split() == ["output", "attention", "gradient", "integrated", "gradients",
                                "erasure"]
    for row, line in enumerate(lines[2:]):
        cells = line.split()
        expected = [SOURCE[source] for source, _ in (found.links(view)[row]
                                                     for view in found.views)]
        assert cells == [TARGET[row].replace(" ", "␣"), *(c.replace(" ", "␣")
                                                          for c in expected)]
    assert found._repr_mimebundle_()["text/plain"] == text


def test_a_long_input_draws_its_attributions_as_small_as_its_attention():
    found = made_up(source=[*("x" * 600), "</s>"], target=[*("y" * 20), "</s>"])
    payload = found._view().payload
    drawn = payload["levels"][0]["hypotheses"][0]
    assert len(drawn["source_tokens"]) <= MAX_SIDE and "note" in payload["levels"][0]
    explanation = payload["explanation"]
    assert explanation["source_pieces"] == drawn["source_tokens"]
    for method in METHODS:
        values = np.asarray(explanation["views"][method])
        assert values.shape == np.shape(drawn["attention"])
        assert (values >= 0).all()  # merged magnitudes


def test_the_figure_is_the_first_view_named(tmp_path):
    pytest.importorskip("py_mini_racer", reason="to_svg needs mini-racer")
    svg = made_up()._view().to_svg()
    assert "· attention" in svg and "Attention heatmap" in svg
    svg = made_up(attention=False)._view().to_svg()
    assert "· gradient × input (|row| / max)" in svg
    assert "|value| / the row's largest" in svg


def test_a_real_explanation_shows_and_saves(translator, tmp_path):
    found = translator.explain(DATE, methods=["erasure"], steps=2)
    attnlab.show(found)  # a console: its table, no error
    page = found.save_html(tmp_path / "explain.html")
    html = page.read_text(encoding="utf-8")
    assert '"attributions": ["erasure"]' in embedded(html)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?https?://""", html)


@pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
@pytest.mark.parametrize("width", [1280, 390])
def test_the_switch_redraws_the_cells_with_no_request(tmp_path, width):
    from playwright.sync_api import sync_playwright

    found = made_up(source=[*"Wednesday, 5 March 2003", "</s>"])
    page_file = found.save_html(tmp_path / "explain.html")
    fills = "cells => cells.map(cell => cell.getAttribute('fill'))"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        requests, problems = [], []
        page.on("request", lambda r: requests.append(r.url)
                if not r.url.startswith(("file:", "data:", "blob:")) else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.goto(page_file.as_uri())
        page.wait_for_selector(".attnlab-view[data-ready='true']")
        view = page.locator(".attnlab-view")
        names = [n.strip() for n in view.locator("fieldset.views label").all_text_contents()]
        assert names == ["attention", "gradient × input", "integrated gradients", "erasure"]
        before = view.locator(".cell").evaluate_all(fills)
        view.locator("input[value='integrated_gradients']").check()
        view.locator("svg[aria-label^='integrated gradients']").wait_for()
        after = view.locator(".cell").evaluate_all(fills)
        assert len(after) == len(before) and after != before
        # the row labels' hover tints by |value| / the row's largest
        view.locator(".row-label[data-row='2']").hover()
        shown = view.locator(".col-label").evaluate_all(
            "nodes => nodes.map(node => Number(node.dataset.weight))")
        values = np.abs(found.views["integrated_gradients"][2])
        assert shown == pytest.approx(values / values.max(), abs=1e-4)
        # the step slider as with attention: rows from step 3 on blank
        view.locator("input[type='range']").fill("3")
        column = view.locator(".cell[data-col='0']").evaluate_all(fills)
        assert len(set(column[3:])) == 1 and column[3] not in column[:3]
        view.locator("input[value='attention']").check()
        view.locator("svg[aria-label^='Attention']").wait_for()
        SHOTS.mkdir(parents=True, exist_ok=True)
        view.locator("input[value='erasure']").check()
        view.locator("svg[aria-label^='erasure']").wait_for()
        assert page.evaluate("document.scrollingElement.scrollWidth") <= width
        page.screenshot(path=str(SHOTS / f"notebook-explain-{width}.png"), full_page=True)
        browser.close()
    assert requests == [] and problems == []
