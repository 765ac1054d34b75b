"""Translations side by side in a notebook view (attnlab.show of a {label: translation} dict)
show all of their heatmaps, at a notebook's width and a phone's: the cards wrap and the heatmaps
scale down to fit, and past a legible size a line says the box scrolls. Made-up translations,
the view saved as a page and opened in chromium; no model, no kernel."""

import pytest

from attnlab.viz.notebook import compare_view
from browser import CHROMIUM, CHROMIUM_ARGS, SHOTS, missing_browser

from .test_payload import translation

pytestmark = pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
SOURCE = [*"14 de febrero de 2003", "</s>"]
TARGET = [*"2003-02-14", "</s>"]
LABELS = ["additive (Bahdanau)", "Luong dot", "Luong general", "Luong concat"]

# For each heatmap box: does it scroll, does a line under it say so, and is its last column
# label (the year's "</s>") inside the box as drawn?
FACTS = """host => [...host.shadowRoot.querySelectorAll('.card .scroll')].map(box => {
    const last = [...box.querySelectorAll('.col-text')].pop().getBoundingClientRect();
    const frame = box.getBoundingClientRect();
    return { scrolls: box.scrollWidth > box.clientWidth + 1,
             said: !!box.nextElementSibling?.matches('.scroll-hint:not([hidden])'),
             lastShown: last.left >= frame.left && last.left < frame.right };
})"""


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    view = compare_view({label: translation(SOURCE, TARGET, seed=k)
                         for k, label in enumerate(LABELS)})
    return view.save_html(tmp_path_factory.mktemp("side-by-side") / "view.html")


@pytest.mark.parametrize("width", [1280, 390])
def test_side_by_side_heatmaps_show_all_of_themselves(page_file, width):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(page_file.as_uri())
        page.wait_for_selector(".attnlab-view[data-ready='true']")
        facts = page.locator(".attnlab-view").evaluate(FACTS)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(".attnlab-view").screenshot(path=str(SHOTS / f"notebook-compare-{width}.png"))
        browser.close()
    assert len(facts) == len(LABELS)
    for fact in facts:
        assert fact["lastShown"] or fact["said"], fact  # never cut off without a word
    if width == 1280:
        assert not any(fact["scrolls"] for fact in facts), facts
