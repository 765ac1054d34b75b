"""A notebook's exported HTML in a real browser: a notebook showing two translations, a caption
and a reading is executed (nbclient) and exported (nbconvert), then chromium opens the file.
Hovering an output token highlights the source token with the largest weight, two views on
one page do not touch each other, and no request leaves the page. Without playwright,
chromium or the notebook packages every test skips, saying which."""

import json

import numpy as np
import pytest

from browser import CHROMIUM, CHROMIUM_ARGS, SHOTS, missing_browser

from .conftest import DATE

pytest.importorskip("nbclient", reason="the notebook tests need nbclient: pip install nbclient")
pytest.importorskip("nbconvert", reason="the notebook tests need nbconvert: pip install nbconvert")
pytestmark = pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
OTHER = "Wednesday, 14 February 2003"
TIMEOUT_MS = 15_000


def notebook(cells: list[str]):
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell(source) for source in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    return nb


@pytest.fixture(scope="module")
def exported(dates_run, shapes_run, lstmn_run, tmp_path_factory):
    """The executed notebook's HTML file, and the weights its kernel printed."""
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    folder = tmp_path_factory.mktemp("notebook")
    nb = notebook(
        [
            "import json, torch\ntorch.set_num_threads(1)\nimport attnlab\n"
            f"translator = attnlab.load({str(dates_run)!r})",
            f"first = translator.translate([{DATE!r}], beam=3, n_best=2)[0]\nfirst",
            f"second = translator.translate([{OTHER!r}])[0]\nsecond",
            "print(json.dumps({'first': first.weights.tolist(),\n"
            "                  'second': second.weights.tolist()}))",
            "from PIL import Image\n"
            f"attnlab.load({str(shapes_run)!r}).caption([Image.new('RGB', (40, 40), 'red')])[0]",
            f"attnlab.load({str(lstmn_run)!r}).read('the cat sees the dog .')",
        ]
    )
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    printed = json.loads(nb.cells[3].outputs[0]["text"])
    # nbconvert's own page loads require.js and MathJax from a CDN unless told not to; the
    # views load nothing, and this test checks that no request at all leaves the page
    exporter = HTMLExporter(require_js_url="", mathjax_url="")
    body, _ = exporter.from_notebook_node(nb)
    path = folder / "notebook.html"
    path.write_text(body, encoding="utf-8")
    nbformat.write(nb, folder / "notebook.ipynb")
    return path, printed


@pytest.fixture
def page(exported):
    from playwright.sync_api import sync_playwright

    problems = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        page.on(
            "request",
            lambda request: (
                None
                if request.url.startswith(("file:", "data:", "blob:"))
                else problems.append(f"request: {request.url}")
            ),
        )
        page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
        page.on(
            "console",
            lambda message: (
                problems.append(f"console: {message.text}") if message.type == "error" else None
            ),
        )
        page.goto(exported[0].as_uri())
        page.wait_for_function(
            "document.querySelectorAll('.attnlab-view').length === 4 && "
            "[...document.querySelectorAll('.attnlab-view')]"
            ".every(view => view.dataset.ready === 'true')"
        )
        yield page
        browser.close()
    assert not problems, problems


def view(page, index: int):
    return page.locator(".attnlab-view").nth(index)


def argmax(values) -> int:
    return int(np.argmax(values))


def test_hovering_an_output_token_lights_its_source(page, exported):
    weights = exported[1]["first"]
    first = view(page, 0)
    assert first.locator(".heatmap .row-label").count() == len(weights)
    for i in range(len(weights)):
        first.locator(f".heatmap .row-label[data-row='{i}']").hover()
        top = first.locator(".heatmap .col-label.is-top")
        assert top.get_attribute("data-index") == str(argmax(weights[i]))
        shown = first.locator(".heatmap .col-label").evaluate_all(
            "nodes => nodes.map(node => Number(node.dataset.weight))"
        )
        assert shown == pytest.approx(weights[i], abs=1e-4)
    SHOTS.mkdir(parents=True, exist_ok=True)
    first.screenshot(path=str(SHOTS / "notebook-test-hover.png"))


def test_two_views_on_one_page_are_independent(page, exported):
    first, second = view(page, 0), view(page, 1)
    first.locator(".heatmap .row-label[data-row='1']").hover()
    assert first.locator(".heatmap .col-label.is-top").count() == 1
    assert second.locator(".heatmap .col-label.is-top").count() == 0
    # each view's ids and its own n-best radios: choosing in one leaves the other alone
    assert first.locator("input[type='radio'][name$='-hypothesis']").count() == 2
    first.locator("input[type='radio'][value='1']").check()
    assert second.locator("input[type='radio'][value='0']").is_checked()
    ids = page.evaluate("""() => [...document.querySelectorAll('.attnlab-view')].flatMap(
        host => [...host.shadowRoot.querySelectorAll('[id]')].map(node => node.id))""")
    assert len(ids) == len(set(ids))
    # the level toggle of one view redraws that view only
    first.locator("input[value='word']").check()
    first.locator(".heatmap .col-label").first.wait_for()
    assert first.locator(".heatmap .col-label").count() < len(exported[1]["first"][0])
    assert second.locator(".heatmap .col-label").count() == len(exported[1]["second"][0])
    # the step slider of the second view leaves the first one's rows drawn
    second.locator("input[type='range']").fill("2")
    assert second.locator("output").text_content().startswith("2 of")


def test_the_caption_and_the_reading_draw(page):
    caption, reading = view(page, 2), view(page, 3)
    caption.locator(".word").first.hover()
    caption.locator("canvas[data-word='0']").wait_for()
    assert caption.locator("svg g[data-word]").count() == caption.locator(".word").count() + 1
    assert reading.locator("svg.reading .reading-line").count() == 7  # <s> and 6 words
    assert reading.locator("svg.heatmap").count() == 1


def test_without_scripts_a_static_figure_shows(exported, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(java_script_enabled=False).new_page()
        page.goto(exported[0].as_uri())
        pictures = page.locator(".attnlab-view > img")
        assert pictures.count() == 4
        assert all(
            width > 50
            for width in pictures.evaluate_all("images => images.map(image => image.naturalWidth)")
        )
        browser.close()
