"""The explorer on a Transformer run in a real browser (as test_browser.py): the heatmap offers
a layer and a head (or the layer's mean), hover and the step slider read the chosen weights, the
n-best list keeps the choice, the grid draws every layer x head and picking a panel chooses it;
a run without heads shows no such controls."""

import pytest

from browser import CHROMIUM, CHROMIUM_ARGS, missing_browser
from heads_run import HEADS, LAYERS, transformer_run

from .test_browser import DATE, TIMEOUT_MS, serving, shoot

pytestmark = [pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser())),
              pytest.mark.slow]


@pytest.fixture(scope="module")
def heads_url(tmp_path_factory, runs):
    url, stop = serving({"tf": transformer_run(tmp_path_factory.mktemp("transformer")),
                         "dates": runs["dates"]})
    yield url
    stop()


@pytest.fixture(scope="module")
def heads_page(heads_url):
    from playwright.sync_api import sync_playwright

    problems = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        def open_page(width: int = 1280):
            context = browser.new_context(viewport={"width": width, "height": 900})
            context.set_default_timeout(TIMEOUT_MS)
            page = context.new_page()
            page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
            page.on("console", lambda message: problems.append(f"console: {message.text}")
                    if message.type == "error" else None)
            page.goto(f"{heads_url}/#translate")
            page.wait_for_selector("body[data-ready='true']")
            page.wait_for_selector("#translate-figure svg.heatmap", state="attached")
            return page

        yield open_page
        browser.close()
    assert not problems, problems


def translated(page, run: str) -> dict:
    page.select_option("#translate-run", run)
    page.fill("#translate-beam", "3")
    page.fill("#translate-nbest", "2")
    page.fill("#translate-text", DATE)
    with page.expect_response(lambda r: r.url.endswith("/api/translate")
                              and (r.request.post_data_json or {}).get("run") == run) as answer:
        page.press("#translate-text", "Enter")
    page.wait_for_selector("#translate-figure svg.heatmap")
    return answer.value.json()


def shown_row(page, i: int) -> list[float]:
    """The weights hovering output token i shows on the source tokens."""
    page.hover(f"#translate-figure .row-label[data-row='{i}']")
    return page.locator("#translate-figure .col-label").evaluate_all(
        "nodes => nodes.map(node => Number(node.dataset.weight))")


def mean(matrices):
    return [[sum(m[i][j] for m in matrices) / len(matrices) for j in range(len(matrices[0][0]))]
            for i in range(len(matrices[0]))]


@pytest.mark.parametrize("width", [1280, 390])
def test_a_layer_and_head_are_chosen_and_every_interaction_reads_them(heads_page, width):
    page = heads_page(width)
    answer = translated(page, "tf")
    best, second = answer["hypotheses"]
    assert len(best["heads"]) == LAYERS and len(best["heads"][0]) == HEADS
    assert page.is_visible("#translate-heads")
    assert page.locator("#translate-layer option").count() == LAYERS
    assert page.locator("#translate-head option").count() == HEADS + 1
    # the default: the last layer's mean, which is the attention the search returned
    assert page.input_value("#translate-layer") == str(LAYERS - 1)
    assert page.input_value("#translate-head") == "mean"
    assert shown_row(page, 0) == pytest.approx(best["attention"][0], abs=1e-4)

    page.select_option("#translate-layer", "0")
    page.select_option("#translate-head", "1")   # layer 1, head 2 as counted on screen
    chosen = best["heads"][0][1]
    for i in range(len(best["tokens"])):
        assert shown_row(page, i) == pytest.approx(chosen[i], abs=1e-4)
    page.select_option("#translate-head", "mean")
    assert shown_row(page, 1) == pytest.approx(mean(best["heads"][0])[1], abs=1e-4)
    page.select_option("#translate-head", "1")

    # the step slider keeps its step across a change of head
    page.fill("#translate-step", "2")
    page.select_option("#translate-head", "0")
    assert page.text_content("#translate-step-out") == f"2 of {len(best['tokens'])}"
    page.select_option("#translate-head", "1")
    # the second hypothesis of the n-best list, under the same choice
    page.check("#translate-hypotheses input[value='1']")
    assert shown_row(page, 0) == pytest.approx(second["heads"][0][1][0], abs=1e-4)
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width
    shoot(page, f"heads-chosen-{width}")


def test_the_grid_draws_every_head_and_a_panel_chooses_it(heads_page):
    page = heads_page()
    best = translated(page, "tf")["hypotheses"][0]
    assert page.is_hidden("#translate-grid")
    page.check("#translate-grid-on")
    panels = page.locator("#translate-grid .heads-panel")
    assert panels.count() == LAYERS * (HEADS + 1)
    assert (page.locator("#translate-grid .heads-panel[aria-pressed='true']").get_attribute(
        "data-head") == "mean")
    page.click("#translate-grid .heads-panel[data-layer='0'][data-head='0']")
    assert page.input_value("#translate-layer") == "0"
    assert page.input_value("#translate-head") == "0"
    assert shown_row(page, 0) == pytest.approx(best["heads"][0][0][0], abs=1e-4)
    assert (page.locator("#translate-grid .heads-panel[aria-pressed='true']").get_attribute(
        "data-layer") == "0")
    shoot(page, "heads-grid")
    page.uncheck("#translate-grid-on")
    assert page.is_hidden("#translate-grid")


def test_a_run_without_heads_shows_no_layer_or_head(heads_page):
    page = heads_page()
    answer = translated(page, "dates")
    assert "heads" not in answer["hypotheses"][0] or answer["hypotheses"][0]["heads"] is None
    assert page.is_hidden("#translate-heads") and page.is_hidden("#translate-grid")


def test_side_by_side_a_card_chooses_its_layer_and_head(heads_page):
    page = heads_page()
    page.click("#tab-compare")
    page.fill("#compare-text", DATE)
    with page.expect_response(lambda r: r.url.endswith("/api/translate")
                              and (r.request.post_data_json or {}).get("run") == "tf") as answer:
        page.press("#compare-text", "Enter")
    page.wait_for_function("document.querySelectorAll('#compare-results svg.heatmap').length == 2")
    best = answer.value.json()["hypotheses"][0]
    card = "#compare-results .card[data-run='tf']"
    assert page.locator("#compare-results .card[data-run='dates'] .heads-select").count() == 0
    assert page.input_value(f"{card} .heads-select") == f"{LAYERS - 1}:mean"
    page.select_option(f"{card} .heads-select", "0:1")
    page.hover(f"{card} .row-label[data-row='0']")
    shown = page.locator(f"{card} .col-label").evaluate_all(
        "nodes => nodes.map(node => Number(node.dataset.weight))")
    assert shown == pytest.approx(best["heads"][0][1][0], abs=1e-4)
    shoot(page, "heads-compare")
