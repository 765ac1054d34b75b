"""The run report as a person sees it: `attnlab report` of a tiny trained run, opened in
headless Chromium at 1280x800. The scores are on the first screen, the page is no wider than
the window, and no path of this machine appears in it. Screenshots go to build/screenshots/
(not committed) for a person to look at. Without playwright or chromium the test skips, saying
which."""

import re
from pathlib import Path

import pytest

from attnlab.cli import main
from browser import CHROMIUM, CHROMIUM_ARGS, SHOTS, missing_browser

WIDTH, HEIGHT = 1280, 800
# The start of an absolute path on a Linux or macOS machine
MACHINE_PATH = re.compile(r"(?<![\w.<])/(tmp|home|root|work|Users|var|private|opt|mnt)/")


@pytest.fixture(scope="module")
def report(dates_run, tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", "--run", str(dates_run), "--output", str(path), "--samples",
                 "2"]) == 0
    return path


def test_no_path_of_the_machine_in_the_page(report, dates_run, dates_data):
    html = report.read_text(encoding="utf-8")
    for path in (dates_run, dates_data, report.parent, Path.cwd(), Path.home()):
        assert str(path) not in html
    assert not MACHINE_PATH.search(html), MACHINE_PATH.search(html)
    assert "val.src / val.tgt" in html and "dates task gold val.align" in html


@pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
def test_scores_first_on_one_screen(report):
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(report.as_uri())
            page.screenshot(path=str(SHOTS / "report.png"))
            page.screenshot(path=str(SHOTS / "report-full.png"), full_page=True)
            scores = page.locator("#scores table").bounding_box()
            tops = page.evaluate("""() => ['scores', 'samples', 'training-curves',
                'configuration'].map(id => document.getElementById(id).offsetTop)""")
            folded = page.evaluate("() => document.getElementById('configuration').open")
            width = page.evaluate("() => document.documentElement.scrollWidth")
            broken = page.evaluate("""() => [...document.images].filter(
                image => !image.complete || image.naturalWidth === 0).length""")
        finally:
            browser.close()
    assert scores is not None and scores["y"] + scores["height"] < HEIGHT  # whole, on screen 1
    assert tops == sorted(tops)  # scores, then samples, then curves, then the config
    assert not folded and width <= WIDTH and broken == 0
