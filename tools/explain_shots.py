"""Screenshots of the heatmap's view switch (attention | gradient x input | integrated gradients
| erasure), in headless chromium: the explorer page serving RUN (in this process, on a free
local port), SENTENCE translated and the switch set to VIEW; and the notebook view of
run.explain(SENTENCE) (saved as a page) with the same view chosen.

    .venv/bin/python tools/explain_shots.py --run runs/compare-dates/bahdanau/seed-1 \
        "Wednesday, 5 March 2003" --view integrated_gradients

writes build/screenshots/explain-explorer-{1280,390}.png and explain-notebook-{1280,390}.png
and prints their paths. Nothing leaves the machine.
"""

import argparse
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser import CHROMIUM, CHROMIUM_ARGS, SHOTS  # noqa: E402

WIDTHS = (1280, 390)
VIEWS = ("attention", "gradient", "integrated_gradients", "erasure")
TIMEOUT_MS = 60_000


def serve(run: str):
    """The explorer over `run` (named as attnlab serve names it) under uvicorn in a thread:
    (its URL, the server)."""
    import uvicorn

    from attnlab.cli.serve import run_name
    from attnlab.serve import create_app

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app({run_name(run): run}), log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{listener.getsockname()[1]}", server


def explorer(browser, url: str, sentence: str, view: str, width: int) -> Path:
    page = browser.new_page(viewport={"width": width, "height": 900}, device_scale_factor=1)
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{url}/#translate")
    page.wait_for_selector("body[data-ready='true']")
    page.fill("#translate-text", sentence)
    page.press("#translate-text", "Enter")
    page.wait_for_selector("#translate-figure svg.heatmap")
    page.check(f"#translate-views input[value='{view}']")
    page.wait_for_selector(f"#translate-figure svg[aria-label^='{label(view)}']")
    path = SHOTS / f"explain-explorer-{width}.png"
    page.screenshot(path=str(path), full_page=True)
    page.close()
    return path


def notebook(browser, html: Path, view: str, width: int) -> Path:
    page = browser.new_page(viewport={"width": width, "height": 900}, device_scale_factor=1)
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(html.as_uri())
    page.wait_for_selector(".attnlab-view[data-ready='true']")
    shown = page.locator(".attnlab-view")
    shown.locator(f"input[value='{view}']").check()
    shown.locator(f"svg[aria-label^='{label(view)}']").wait_for()
    path = SHOTS / f"explain-notebook-{width}.png"
    page.screenshot(path=str(path), full_page=True)
    page.close()
    return path


def label(view: str) -> str:
    """How a heatmap of `view` names itself (its aria-label's start)."""
    return {"attention": "Attention", "gradient": "gradient × input",
            "integrated_gradients": "integrated gradients"}.get(view, view)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", required=True, help="a translation run directory")
    parser.add_argument("sentence")
    parser.add_argument("--view", choices=VIEWS, default="integrated_gradients")
    args = parser.parse_args()

    import torch
    from playwright.sync_api import sync_playwright

    import attnlab

    torch.set_num_threads(1)
    SHOTS.mkdir(parents=True, exist_ok=True)
    url, server = serve(args.run)
    with tempfile.TemporaryDirectory() as folder:
        html = attnlab.load(args.run).explain(args.sentence).save_html(Path(folder) / "v.html")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            shots = []
            for width in WIDTHS:
                shots.append(explorer(browser, url, args.sentence, args.view, width))
                shots.append(notebook(browser, html, args.view, width))
            browser.close()
    server.should_exit = True
    for path in shots:
        print(path)


if __name__ == "__main__":
    main()
