"""Screenshots of a notebook's inline views, from its HTML export, in headless chromium: the
first translation, caption and reading view, each hovered or focused as a reader would.

    jupyter nbconvert --to html --execute docs/tutorial.ipynb --output-dir build/tutorial
    .venv/bin/python tools/notebook_shots.py build/tutorial/tutorial.html

writes build/screenshots/notebook-translation.png, -caption.png and -reading.png (and
build/screenshots/notebook-page.png, the whole page). Nothing is fetched: nbconvert's page asks
a CDN for require.js and MathJax, which the browser is not let reach; the views need neither.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser import CHROMIUM, CHROMIUM_ARGS, SHOTS  # noqa: E402

READY = (
    "[...document.querySelectorAll('.attnlab-view')].length > 0 && "
    "[...document.querySelectorAll('.attnlab-view')].every(v => v.dataset.ready === 'true')"
)


def first_view(page, kind: str):
    """The first view of a kind (its host element), scrolled into sight."""
    index = page.evaluate(f"""() => [...document.querySelectorAll('.attnlab-view')].findIndex(
        host => host.shadowRoot.querySelector('.nb-{kind}'))""")
    if index < 0:
        raise SystemExit(f"no {kind} view in the page")
    view = page.locator(".attnlab-view").nth(index)
    view.scroll_into_view_if_needed()
    return view


def main(html: str) -> None:
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900}, device_scale_factor=1)
        page.goto(Path(html).resolve().as_uri())
        page.wait_for_function(READY, timeout=30_000)
        translation = first_view(page, "translation")
        translation.locator(".heatmap .row-label[data-row='0']").hover()
        translation.screenshot(path=str(SHOTS / "notebook-translation.png"))
        caption = first_view(page, "caption")
        caption.locator(".word").nth(2).hover()
        caption.screenshot(path=str(SHOTS / "notebook-caption.png"))
        reading = first_view(page, "reading")
        reading.locator(".heatmap .row-label").last.hover()
        reading.screenshot(path=str(SHOTS / "notebook-reading.png"))
        page.screenshot(path=str(SHOTS / "notebook-page.png"), full_page=True)
        browser.close()
    for name in ("translation", "caption", "reading", "page"):
        print(SHOTS / f"notebook-{name}.png")


if __name__ == "__main__":
    main(sys.argv[1])
