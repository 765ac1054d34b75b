"""The explorer page in a real browser: Playwright drives Debian's chromium against the real app
(uvicorn on a free local port) serving the tiny runs of conftest.py, plus a Luong dates run to
compare with. Each test saves a screenshot of its tab under build/screenshots/ (not committed)
for a person to look at. Without playwright or chromium every test skips, saying which."""

import io
import json
import socket
import threading
import time
from pathlib import Path

import pytest

import attnlab
from attnlab.data import write_dates
from attnlab.serve import create_app
from attnlab.translation import TranslationTask
from browser import CHROMIUM, CHROMIUM_ARGS, SHOTS, missing_browser

from .conftest import train, translation_config

DATE = "3 March 1999"
TIMEOUT_MS = 15_000



pytestmark = pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))


@pytest.fixture(scope="module")
def luong_run(tmp_path_factory):
    """A second dates run, Luong's decoder with the general score, to compare with Bahdanau's."""
    data_dir = tmp_path_factory.mktemp("dates-luong")
    write_dates(data_dir, size=200, seed=7)
    data = {"dir": str(data_dir), "train": "train", "valid": "val", "test": "test",
            "src_lang": "src", "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False,
            "max_len": 60, "batch_size": 32, "valid_sentences": 10}
    decoder = {"kind": "luong", "attention": {"score": "general"}}
    return train(TranslationTask, translation_config(data, decoder, 10),
                 tmp_path_factory.mktemp("runs") / "dates-luong")


@pytest.fixture(scope="module")
def base_url(runs, luong_run):
    """The real app under uvicorn in a thread, on a port the OS picked."""
    url, stop = serving({"dates": runs["dates"], "luong": luong_run, "plain": runs["plain"],
                         "shapes": runs["shapes"], "lstmn": runs["lstmn"]})
    yield url
    stop()


def serving(runs: dict):
    """The real app over `runs` under uvicorn in a thread: (its URL, a stop function)."""
    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(runs), log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)

    def stop():
        server.should_exit = True
        thread.join(timeout=10)
        listener.close()
    return f"http://127.0.0.1:{listener.getsockname()[1]}", stop


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def open_page(browser, base_url):
    """open_page(tab, width=1280) -> a page showing that tab, the runs loaded. The test fails
    on any script error or console error the page logs (a 4xx answer the page shows is fine)
    and on any request that leaves the app (the page needs no network)."""
    contexts, problems = [], []

    def open_tab(tab: str = "translate", width: int = 1280):
        context = browser.new_context(viewport={"width": width, "height": 900},
                                      accept_downloads=True)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("request", lambda request: None if request.url.startswith(
            (base_url, "data:", "blob:")) else problems.append(f"request: {request.url}"))
        page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
        page.on("console", lambda message: problems.append(f"console: {message.text}")
                if message.type == "error" and "status of 4" not in message.text else None)
        page.goto(f"{base_url}/#{tab}")
        page.wait_for_selector("body[data-ready='true']")
        # the page opens with the first run's example translated: let that finish first
        page.wait_for_selector("#translate-figure svg.heatmap", state="attached")
        assert page.is_visible(f"#panel-{tab}")
        return page

    yield open_tab
    for context in contexts:
        context.close()
    assert not problems, problems


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def translate(page, text: str = DATE, **choices) -> dict:
    """Type text, press Enter, wait for the answer and its heatmap; the answer's JSON."""
    for field, value in choices.items():
        page.fill(f"#translate-{field}", str(value))
    page.fill("#translate-text", text)
    with page.expect_response(lambda r: r.url.endswith("/api/translate")
                              and (r.request.post_data_json or {}).get("text") == text) as answer:
        page.press("#translate-text", "Enter")
    page.wait_for_selector("#translate-figure svg.heatmap")
    return answer.value.json()


def labels(page, kind: str, within: str = "#translate-figure") -> list[str]:
    return page.locator(f"{within} .{kind}-text text").all_text_contents()


def as_label(token: str) -> str:
    """A token as the page labels it (label() in static/svg.js; viz.token_label)."""
    from attnlab.viz import token_label

    return token_label(token)


def argmax(values) -> int:
    return max(range(len(values)), key=values.__getitem__)


def test_translate_hover_highlights_what_a_word_attended_to(open_page):
    page = open_page("translate")
    hypotheses = translate(page, beam=3, nbest=2)["hypotheses"]
    assert page.locator("#translate-hypotheses li").count() == len(hypotheses) == 2
    best = hypotheses[0]
    attention = best["attention"]
    # a character-level run is drawn in characters: its spaces as "␣"
    assert labels(page, "col") == [as_label(token) for token in best["source_tokens"]]
    assert labels(page, "row") == [as_label(token) for token in best["tokens"]]

    # hovering target word i tints every source word by its weight; the largest is marked
    for i in range(len(best["tokens"])):
        page.hover(f"#translate-figure .row-label[data-row='{i}']")
        top = page.locator("#translate-figure .col-label.is-top")
        assert top.get_attribute("data-index") == str(argmax(attention[i]))
        shown = page.locator("#translate-figure .col-label").evaluate_all(
            "nodes => nodes.map(node => Number(node.dataset.weight))")
        assert shown == pytest.approx(attention[i], abs=1e-4)

    # hovering source word j marks the target word that looked at it most
    column = argmax(attention[0])
    page.hover(f"#translate-figure .col-label[data-col='{column}']")
    top = page.locator("#translate-figure .row-label.is-top")
    assert top.get_attribute("data-index") == str(argmax([row[column] for row in attention]))
    shoot(page, "translate-hover")

    # the keyboard does the same: focus the first target word
    page.mouse.move(0, 0)
    page.focus("#translate-figure .row-label[data-row='0']")
    assert (page.locator("#translate-figure .col-label.is-top").get_attribute("data-index")
            == str(argmax(attention[0])))

    with page.expect_download() as download:
        page.click("#translate-downloads button[data-format='svg']")
    assert download.value.suggested_filename == "attention-dates.svg"
    assert "<svg" in Path(download.value.path()).read_text(encoding="utf-8")
    with page.expect_download() as download:
        page.click("#translate-downloads button[data-format='png']")
    assert download.value.suggested_filename == "attention-dates.png"
    assert Path(download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with page.expect_download() as download:
        page.click("#translate-downloads button[data-format='json']")
    saved = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert saved["hypothesis"]["attention"] == attention


def test_levels_are_the_runs_own_and_the_step_slider(open_page):
    page = open_page("translate")
    # a character-level run: its characters first, then words, each level named
    toggle = page.locator("#translate-levels label").all_text_contents()
    assert [name.strip() for name in toggle] == ["characters", "words"]
    assert page.is_checked("#translate-form input[name='level'][value='piece']")
    pieces = translate(page)["hypotheses"][0]
    shown = labels(page, "col")
    assert shown == [as_label(piece) for piece in pieces["source_tokens"]]
    with page.expect_response(lambda r: r.url.endswith("/api/translate")) as answer:
        page.check("#translate-form input[name='level'][value='word']")
    words = answer.value.json()["hypotheses"][0]
    page.wait_for_function(
        "n => document.querySelectorAll('#translate-figure .col-label').length === n",
        arg=len(words["source_tokens"]))
    assert len(shown) > len(words["source_tokens"])  # one label per character before
    page.check("#translate-form input[name='level'][value='piece']")
    page.wait_for_function(
        "n => document.querySelectorAll('#translate-figure .col-label').length === n",
        arg=len(pieces["source_tokens"]))

    # step 2 of the decoding: rows 0 and 1 drawn, the rest blank, the text so far shown
    assert len(pieces["tokens"]) >= 3
    page.fill("#translate-step", "2")
    assert page.text_content("#translate-step-out") == f"2 of {len(pieces['tokens'])}"
    assert page.text_content("#translate-partial") == "".join(pieces["tokens"][:2])
    assert page.text_content("#translate-partial mark") == pieces["tokens"][1]
    fills = page.locator("#translate-figure .cell[data-col='0']").evaluate_all(
        "cells => cells.map(cell => cell.getAttribute('fill'))")
    assert len(set(fills[2:])) == 1 and fills[2] not in fills[:2]

    # the arrow keys move between the target words drawn so far, highlighting as they go
    page.focus("#translate-figure .row-label[data-row='0']")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.row") == "1"
    assert (page.locator("#translate-figure .col-label.is-top").get_attribute("data-index")
            == str(argmax(pieces["attention"][1])))
    page.keyboard.press("ArrowDown")  # row 2 is not decoded yet at step 2
    assert page.evaluate("document.activeElement.dataset.row") == "1"
    shoot(page, "translate-pieces-step")


def test_compare_two_runs_side_by_side(open_page):
    page = open_page("compare")
    page.uncheck("#compare-runs input[value='plain']")
    page.fill("#compare-text", DATE)
    page.press("#compare-text", "Enter")
    page.wait_for_function("document.querySelectorAll('#compare-results svg.heatmap').length == 2")
    captions = page.locator("#compare-results figcaption").all_text_contents()
    assert [c.split()[0] for c in captions] == ["dates", "luong"]
    assert "bahdanau" in captions[0] and "luong" in captions[1]
    shoot(page, "compare")


# Every heatmap box on the page: does it scroll, and does the line under it say so?
BOXES = """selector => [...document.querySelectorAll(selector)].map(box => ({
    scrolls: box.scrollWidth > box.clientWidth + 1,
    said: !!box.nextElementSibling?.matches('.scroll-hint:not([hidden])')}))"""


@pytest.mark.parametrize("width", [1280, 390])
def test_side_by_side_heatmaps_show_all_of_themselves(open_page, width):
    """Each card's heatmap fits its card (cards wrap, heatmaps scale down); on a phone at
    most a scroll that a line under it names: never a heatmap cut off without a word."""
    page = open_page("compare", width=width)
    page.uncheck("#compare-runs input[value='plain']")
    page.fill("#compare-text", "Wednesday, 14 February 2003")
    page.press("#compare-text", "Enter")
    page.wait_for_function("document.querySelectorAll('#compare-results svg.heatmap').length == 2")
    boxes = page.evaluate(BOXES, "#compare-results .scroll")
    assert len(boxes) == 2 and all(not box["scrolls"] or box["said"] for box in boxes), boxes
    if width == 1280:
        assert not any(box["scrolls"] for box in boxes)  # the page is wide enough for all
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width
    shoot(page, f"compare-{width}")


def test_the_chosen_run_says_what_it_was_trained_on(open_page):
    page = open_page("translate")
    about = page.locator("#translate-about")
    assert "trained on dates of 1950-2049" in about.text_content()
    page.select_option("#translate-run", "plain")
    assert about.text_content() == "none (no attention)"


def test_an_error_is_cleared_by_the_next_action(open_page):
    page = open_page("translate")
    status = page.locator("#translate-status")
    page.fill("#translate-text", "")
    page.click("#translate-form button[type='submit']")
    page.wait_for_selector("#translate-status[data-kind='error']")
    page.fill("#translate-text", DATE)  # typing is the next action
    assert status.text_content() == "" and status.get_attribute("data-kind") != "error"

    page.fill("#translate-text", "")
    page.click("#translate-form button[type='submit']")
    page.wait_for_selector("#translate-status[data-kind='error']")
    page.fill("#translate-text", DATE)
    page.fill("#translate-beam", "999")  # the browser refuses this value itself
    page.click("#translate-form button[type='submit']")
    assert status.text_content() == ""  # no old error beside the browser's new one

    compare = open_page("compare")
    for run in ("luong", "plain"):
        compare.uncheck(f"#compare-runs input[value='{run}']")
    compare.fill("#compare-text", DATE)
    compare.press("#compare-text", "Enter")
    compare.locator("#compare-status", has_text="Pick at least two runs").wait_for()
    compare.check("#compare-runs input[value='luong']")
    assert compare.text_content("#compare-status") == ""


def test_caption_an_uploaded_image(open_page):
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (64, 64), "white")
    ImageDraw.Draw(image).ellipse((8, 8, 30, 30), fill="red")
    ImageDraw.Draw(image).rectangle((36, 34, 58, 56), fill="blue")
    png = io.BytesIO()
    image.save(png, format="PNG")

    page = open_page("caption")
    with page.expect_response(lambda r: r.url.endswith("/api/caption")) as answer:
        page.set_input_files("#caption-file", files=[
            {"name": "shapes.png", "mimeType": "image/png", "buffer": png.getvalue()}])
    caption = answer.value.json()
    page.wait_for_selector("#caption-words .word")
    assert page.locator("#caption-words .word").all_text_contents() == caption["tokens"]
    assert page.text_content("#caption-status") == "shapes captioned shapes.png."
    assert page.locator("#caption-strip g[data-word]").count() == len(caption["tokens"]) + 1

    page.hover("#caption-words .word >> nth=1")
    page.wait_for_selector("#caption-overlay[data-word='1']")
    veiled = page.evaluate("""() => {
        const canvas = document.getElementById('caption-overlay');
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
        let opaque = 0;
        for (let k = 3; k < pixels.data.length; k += 4) opaque += pixels.data[k] > 0;
        return opaque / (canvas.width * canvas.height);
    }""")
    assert veiled > 0.1  # the veil covers what the word did not look at
    shoot(page, "caption")

    # dropping an image on the tab captions it too
    transfer = page.evaluate_handle("""bytes => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(bytes)], "dropped.png", {type: "image/png"}));
        return transfer;
    }""", list(png.getvalue()))
    with page.expect_response(lambda r: r.url.endswith("/api/caption")):
        page.dispatch_event("#caption-drop", "drop", {"dataTransfer": transfer})
    page.locator("#caption-status", has_text="dropped.png").wait_for()


def test_lstmn_reading_figure(open_page):
    page = open_page("read")
    page.fill("#read-text", "the cat sees the dog .")
    with page.expect_response(lambda r: r.url.endswith("/api/read")) as answer:
        page.press("#read-text", "Enter")
    reading = answer.value.json()
    page.wait_for_selector("#read-figure svg.reading")
    steps = len(reading["tokens"])
    assert page.locator("#read-figure .reading-line").count() == steps
    assert page.locator("#read-figure .current").all_text_contents() == reading["tokens"]
    # step t shades the t earlier words by their weights
    last = page.locator(f"#read-figure .reading-line[data-step='{steps - 1}'] rect.memory")
    weights = last.evaluate_all("boxes => boxes.map(box => Number(box.dataset.weight))")
    assert weights == pytest.approx(reading["weights"][-1][: steps - 1], abs=1e-4)
    assert page.locator("#read-matrix svg.heatmap").count() == 1
    shoot(page, "lstmn")


def test_an_error_shows_the_servers_sentence(open_page, base_url):
    page = open_page("translate")
    page.fill("#translate-text", "")
    with page.expect_response(lambda r: r.url.endswith("/api/translate")) as answer:
        page.click("#translate-form button[type='submit']")
    assert answer.value.status == 422
    detail = answer.value.json()["detail"]
    status = page.locator("#translate-status")
    status.filter(has_text=detail).wait_for()
    assert status.text_content() == detail
    assert status.get_attribute("aria-live") == "polite"
    assert page.is_hidden("#translate-results")
    shoot(page, "translate-error")


def test_a_run_without_attention_says_so(open_page):
    page = open_page("translate")
    page.select_option("#translate-run", "plain")
    page.fill("#translate-text", "Ein Mann spielt Gitarre .")
    page.press("#translate-text", "Enter")
    page.locator("#translate-figure .empty").wait_for()
    assert page.is_hidden("#translate-stepper")
    assert page.locator("#translate-downloads button[disabled]").count() == 3


def test_the_beam_boxes_allow_what_the_server_accepts(open_page):
    from attnlab.serve import Limits

    page = open_page("translate")
    for box in ("#translate-beam", "#translate-nbest", "#compare-beam"):
        assert page.get_attribute(box, "max") == str(Limits().max_beam)


def test_phone_width_keeps_the_page_within_the_screen(open_page):
    page = open_page("translate", width=390)
    translate(page, "Wednesday, 3 March 1999", beam=3, nbest=3)
    page.wait_for_function("document.querySelectorAll('#translate-figure .col-label').length > 12")
    width = "document.scrollingElement.scrollWidth"
    assert page.evaluate(width) <= 390
    box = page.locator("#translate-figure")
    assert box.evaluate("box => box.scrollWidth > box.clientWidth")  # it scrolls inside its box
    assert page.evaluate(BOXES, "#translate-figure") == [{"scrolls": True, "said": True}]
    shoot(page, "phone-translate")

    # the tabs are a tablist: the arrow keys move between them, each fits the phone too
    page.focus("#tab-translate")
    for tab in ("compare", "caption", "read"):
        page.keyboard.press("ArrowRight")
        assert page.get_attribute(f"#tab-{tab}", "aria-selected") == "true"
        assert page.is_visible(f"#panel-{tab}") and page.is_hidden("#panel-translate")
        assert page.evaluate(width) <= 390, tab
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#tab-translate", "aria-selected") == "true"


# The heatmap's view switch: attention, or an attribution of the same output (POST /api/explain)

FILLS = "cells => cells.map(cell => cell.getAttribute('fill'))"
VIEWS = {"attention": "attention", "gradient": "gradient × input",
         "integrated_gradients": "integrated gradients", "erasure": "erasure"}


def row_scaled(values) -> list[list[float]]:
    """|values| over each row's largest (explain-view.js's rowScaled)."""
    peaks = [max(abs(v) for v in row) for row in values]
    return [[abs(v) / peak if peak else 0.0 for v in row] for row, peak in zip(values, peaks,
                                                                                strict=True)]


def switch_to(page, view: str) -> dict:
    """Choose `view` on the switch; the answer of the /api/explain request it makes."""
    with page.expect_response(lambda r: r.url.endswith("/api/explain")) as answer:
        page.check(f"#translate-views input[value='{view}']")
    page.wait_for_selector(f"#translate-figure svg[aria-label^='{VIEWS[view]}']")
    assert answer.value.status == 200, answer.value.text()
    return answer.value.json()


def test_the_switch_redraws_the_heatmap_with_an_attribution_of_the_same_output(open_page):
    page = open_page("translate")
    asked = []
    page.on("request", lambda r: asked.append(r.post_data_json)
            if r.url.endswith("/api/explain") else None)
    hypotheses = translate(page, beam=3, nbest=2)["hypotheses"]
    assert asked == []  # nothing is explained before it is asked for
    names = page.locator("#translate-views label").all_text_contents()
    assert [name.strip() for name in names] == list(VIEWS.values())
    assert page.is_checked("#translate-views input[value='attention']")
    attention_fills = page.locator("#translate-figure .cell").evaluate_all(FILLS)

    found = switch_to(page, "integrated_gradients")
    assert asked == [{"run": "dates", "text": DATE, "target": hypotheses[0]["text"],
                      "methods": ["integrated_gradients"]}]
    values = found["views"]["integrated_gradients"]
    assert labels(page, "row") == [as_label(t) for t in found["target_pieces"]]
    assert labels(page, "col") == [as_label(t) for t in found["source_pieces"]]
    fills = page.locator("#translate-figure .cell").evaluate_all(FILLS)
    # redrawn (an unfinished hypothesis is explained with its "</s>": one row more)
    assert len(fills) == len(values) * len(values[0]) and fills != attention_fills
    # hovering an output piece tints the source pieces by |value| / the row's largest
    scaled = row_scaled(values)
    for i in range(len(values)):
        page.hover(f"#translate-figure .row-label[data-row='{i}']")
        shown = page.locator("#translate-figure .col-label").evaluate_all(
            "nodes => nodes.map(node => Number(node.dataset.weight))")
        assert shown == pytest.approx(scaled[i], abs=1e-4)
        assert (page.locator("#translate-figure .col-label.is-top").get_attribute("data-index")
                == str(argmax(scaled[i])))
    caption = page.text_content("#translate-view-caption")
    assert caption.startswith("Integrated gradients of the same output")
    assert "|value| over the row's largest" in caption
    assert page.locator("#translate-figure .legend text").first.text_content() == (
        "|value| / the row's largest")
    with page.expect_download() as download:
        page.click("#translate-downloads button[data-format='json']")
    saved = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert saved["view"] == "integrated_gradients" and saved["explanation"] == found

    # back to attention: drawn as before, from what the page holds (no request)
    page.check("#translate-views input[value='attention']")
    page.wait_for_selector("#translate-figure svg[aria-label^='Attention']")
    assert page.locator("#translate-figure .cell").evaluate_all(FILLS) == attention_fills
    assert len(asked) == 1

    # the step slider keeps its step across the switch: rows from step 2 on stay blank
    page.fill("#translate-step", "2")
    switch_to(page, "erasure")
    assert page.text_content("#translate-step-out") == f"2 of {len(found['target_pieces'])}"
    column = page.locator("#translate-figure .cell[data-col='0']").evaluate_all(FILLS)
    assert len(set(column[2:])) == 1 and column[2] not in column[:2]
    shoot(page, "explain-1280")

    # the second hypothesis is explained as itself, in the view chosen
    with page.expect_response(lambda r: r.url.endswith("/api/explain")):
        page.check("#translate-hypotheses input[value='1']")
    page.wait_for_function("text => document.querySelector('#translate-status').textContent"
                           ".startsWith(text)", arg="Erasure of this output")
    assert asked[-1]["target"] == hypotheses[1]["text"] and asked[-1]["methods"] == ["erasure"]


def test_the_switch_fits_a_phone(open_page):
    page = open_page("translate", width=390)
    translate(page, "Wednesday, 3 March 1999", beam=3, nbest=3)
    switch_to(page, "gradient")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    assert page.evaluate(BOXES, "#translate-figure") == [{"scrolls": True, "said": True}]
    shoot(page, "explain-390")


def test_attributions_are_offered_at_the_models_own_pieces(open_page):
    page = open_page("translate")
    page.check("#translate-form input[name='level'][value='word']")
    translate(page)
    disabled = page.locator("#translate-views input:disabled").evaluate_all(
        "inputs => inputs.map(input => input.value)")
    assert disabled == ["gradient", "integrated_gradients", "erasure"]
    assert page.text_content("#translate-views-note") == (
        "The attributions are over the model's own pieces: choose Labels: characters to see "
        "them.")


def test_a_run_without_attention_shows_its_attributions(open_page):
    page = open_page("translate")
    page.select_option("#translate-run", "plain")
    page.fill("#translate-text", "Ein Mann spielt Gitarre .")
    page.press("#translate-text", "Enter")
    page.locator("#translate-figure .empty").wait_for()
    assert page.is_disabled("#translate-views input[value='attention']")
    assert "Choose an attribution under Show" in page.text_content("#translate-figure .empty")
    found = switch_to(page, "gradient")
    assert page.is_visible("#translate-stepper")
    assert page.locator("#translate-figure .row-label").count() == len(found["target_pieces"])


@pytest.mark.parametrize("width", [1280, 390])
def test_one_dates_run_opens_translated_with_only_its_tab(browser, runs, width):
    """The explorer over one translation run opens with its example sentence translated, and
    shows no tab that no loaded run answers (captioning, LSTMN; compare needs two)."""
    url, stop = serving({"dates": runs["dates"]})
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("body[data-ready='true']")
        page.wait_for_selector("#translate-figure svg")
        example = attnlab.load(runs["dates"]).example     # its first validation source
        assert example and page.input_value("#translate-text") == example
        assert [tab for tab in ("translate", "compare", "caption", "read")
                if page.is_visible(f"#tab-{tab}")] == ["translate"]
        page.focus("#tab-translate")
        page.keyboard.press("ArrowRight")               # the only tab stays chosen
        assert page.get_attribute("#tab-translate", "aria-selected") == "true"
        assert page.evaluate("document.scrollingElement.scrollWidth") <= width
        shoot(page, f"opening-{width}")
    finally:
        context.close()
        stop()


def test_switching_back_says_what_is_shown_not_a_stale_timing(open_page):
    page = open_page("translate")
    translate(page)
    switch_to(page, "erasure")
    assert "computed in" in page.text_content("#translate-status")
    page.check("#translate-views input[value='attention']")
    assert page.text_content("#translate-status") == "Attention of this output."
    page.check("#translate-views input[value='erasure']")   # kept: no request, no timing
    assert page.text_content("#translate-status") == "Erasure of this output (computed before)."
