"""The JSON API end to end with TestClient: every endpoint's answer against the library's own,
and every refusal as {"detail": "<one sentence>"} with its status."""

import base64
import io
import re
import struct
import tempfile
import zlib

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image, ImageFile

import attnlab.serve.app as serve_app
from attnlab.captioning import CaptioningRun, read_karpathy
from attnlab.lm import LanguageModelRun
from attnlab.serve import create_app
from attnlab.translation import TranslationRun

from .conftest import LOCAL

DATE = "3 May 2001"
JSON_BODY = {"content-type": "application/json"}


def refused(response, status: int) -> str:
    """The response's one-sentence detail, after checking the status and the error shape."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"detail"} and isinstance(body["detail"], str)
    assert body["detail"] and "\n" not in body["detail"]
    return body["detail"]


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def declared_png(width: int, height: int) -> bytes:
    """A PNG of a few dozen bytes whose header declares width x height pixels (a bomb)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


def test_runs_lists_every_run_with_task_mechanism_and_config(client, runs):
    listed = {run["name"]: run for run in client.get("/api/runs").json()}
    assert list(listed) == list(runs)
    assert {name: (run["task"], run["mechanism"]) for name, run in listed.items()} == {
        "dates": ("translation", "bahdanau / additive, global"),
        "plain": ("translation", "none (no attention)"),
        "shapes": ("captioning", "soft attention (additive, global)"),
        "lstmn": ("lm", "lstmn / additive")}
    assert listed["dates"]["config"]["data"]["vocab"] == "char"
    assert listed["dates"]["config"]["model"]["decoder"]["kind"] == "bahdanau"
    assert {run["quantized"] for run in listed.values()} == {None}


def test_a_run_says_what_it_was_trained_on(client):
    """The explorer shows it under the run picker: the dates task's years come from the data's
    meta.json (issue 36: the demo's world is said, not left to a docstring)."""
    about = {run["name"]: run["about"] for run in client.get("/api/runs").json()}
    assert about["dates"].startswith("bahdanau / additive, global; trained on dates of 1950-2049")
    assert about["plain"] == "none (no attention)"   # its data says nothing of itself
    assert about["shapes"] == ""                      # a task whose Run says no more


def test_translate_answers_the_libraries_n_best_list(client, dates_run):
    answer = client.post("/api/translate", json={"run": "dates", "text": DATE, "beam": 4,
                                                 "nbest": 3, "level": "piece"})
    assert answer.status_code == 200
    hypotheses = answer.json()["hypotheses"]
    trained = TranslationRun.load(dates_run)
    expected = trained.translate([DATE], beam=4, n_best=3)[0].hypotheses
    assert [h["text"] for h in hypotheses] == [e.text for e in expected]
    assert [h["tokens"] for h in hypotheses] == [e.target_pieces for e in expected]
    scores = [h["score"] for h in hypotheses]
    assert scores == sorted(scores, reverse=True)
    assert scores == pytest.approx([e.score for e in expected], abs=1e-5)
    for hypothesis, library in zip(hypotheses, expected, strict=True):
        np.testing.assert_allclose(hypothesis["attention"], library.attention, atol=1e-6)
    # the n-best list starts with the 1-best
    best = client.post("/api/translate", json={"run": "dates", "text": DATE, "beam": 4,
                                               "level": "piece"}).json()["hypotheses"]
    assert len(best) == 1 and best[0]["tokens"] == hypotheses[0]["tokens"]


@pytest.mark.parametrize("level", ["word", "piece"])
def test_attention_is_tokens_by_source_tokens_and_rows_sum_to_one(client, level):
    text = "Tuesday, 14 March 1995"
    answer = client.post("/api/translate", json={"run": "dates", "text": text, "nbest": 2,
                                                 "level": level}).json()
    for hypothesis in answer["hypotheses"]:
        attention = np.array(hypothesis["attention"])
        assert attention.shape == (len(hypothesis["tokens"]), len(hypothesis["source_tokens"]))
        np.testing.assert_allclose(attention.sum(1), 1.0, atol=1e-5)
        assert hypothesis["source_tokens"][-1] == "</s>"
        if level == "word":
            assert hypothesis["source_tokens"] == ["Tuesday,", "14", "March", "1995", "</s>"]
        else:
            assert hypothesis["source_tokens"] == [*text, "</s>"]
            assert "".join(t for t in hypothesis["tokens"] if t != "</s>") == hypothesis["text"]


def test_a_run_without_attention_gives_attention_null(client):
    answer = client.post("/api/translate", json={"run": "plain", "text": "Ein Mann spielt ."})
    assert answer.status_code == 200
    (hypothesis,) = answer.json()["hypotheses"]
    assert hypothesis["attention"] is None
    assert hypothesis["source_tokens"] == ["Ein", "Mann", "spielt", ".", "</s>"]


def test_caption_of_a_test_example_and_of_its_upload_agree(client, shapes_run):
    trained = CaptioningRun.load(shapes_run)
    data = trained.config.data
    test = [i for i in read_karpathy(data.json) if i.split == data.test_split]
    example = client.post("/api/caption", json={"run": "shapes", "example": 1})
    assert example.status_code == 200
    answer = example.json()
    height, width = answer["grid"]
    assert (height, width) == (8, 8)  # 32 px through two stride-2 stages
    attention = np.array(answer["attention"])
    assert attention.shape == (len(answer["tokens"]), height * width)
    np.testing.assert_allclose(attention.sum(1), 1.0, atol=1e-5)
    assert answer["caption"] == " ".join(answer["tokens"])
    (expected,) = trained.caption([f"{data.images}/{test[1].path}"])
    assert answer["tokens"] == expected.words
    prefix = "data:image/png;base64,"
    assert answer["image"].startswith(prefix)
    seen = Image.open(io.BytesIO(base64.b64decode(answer["image"][len(prefix):])))
    assert seen.size == (32, 32)
    with open(f"{data.images}/{test[1].path}", "rb") as file:
        upload = client.post("/api/caption", data={"run": "shapes"},
                             files={"image": ("x.png", file.read(), "image/png")})
    assert upload.status_code == 200 and upload.json() == answer


def test_read_gives_the_lstmn_last_layer(client, lstmn_run):
    text = "the cat sees the dog ."
    answer = client.post("/api/read", json={"run": "lstmn", "text": text})
    assert answer.status_code == 200
    body = answer.json()
    reading = LanguageModelRun.load(lstmn_run).read(text)
    assert body["tokens"] == reading.tokens == ["<s>", *text.split()]
    weights = np.array(body["weights"])
    np.testing.assert_allclose(weights, reading.weights[-1], atol=1e-6)
    assert weights.shape == (7, 7) and reading.weights.shape[0] == 2  # the last of 2 layers
    assert np.all(np.triu(weights) == 0)  # row t looks only at i < t
    np.testing.assert_allclose(weights[1:].sum(1), 1.0, atol=1e-5)


def test_unknown_run_is_404_listing_the_runs(client):
    detail = refused(client.post("/api/translate", json={"run": "nope", "text": DATE}), 404)
    assert detail == "unknown run 'nope'; runs: dates, plain, shapes, lstmn"
    refused(client.post("/api/caption", data={"run": "nope"},
                        files={"image": ("x.png", b"123", "image/png")}), 404)


@pytest.mark.parametrize(("path", "body", "expected"), [
    ("/api/translate", {"run": "shapes", "text": DATE},
     "run shapes is a captioning run; use /api/caption"),
    ("/api/caption", {"run": "dates", "example": 0},
     "run dates is a translation run; use /api/translate"),
    ("/api/read", {"run": "dates", "text": DATE}, "run dates is a translation run; use "
     "/api/translate"),
    ("/api/translate", {"run": "lstmn", "text": DATE},
     "run lstmn is a language-model run; use /api/read"),
])
def test_a_run_of_another_task_is_422_naming_the_endpoint(client, path, body, expected):
    assert refused(client.post(path, json=body), 422) == expected


@pytest.mark.parametrize("beam", [0, -1, 17, 1000])
def test_beam_outside_1_to_16_is_422(client, beam):
    detail = refused(client.post("/api/translate", json={"run": "dates", "text": DATE,
                                                         "beam": beam}), 422)
    assert detail == f"beam must be between 1 and 16, got {beam}"


def test_nbest_over_the_beam_is_422(client):
    detail = refused(client.post("/api/translate", json={"run": "dates", "text": DATE,
                                                         "beam": 2, "nbest": 3}), 422)
    assert detail == "n_best must be between 1 and the beam size 2, got 3"
    # without a beam, the run's beam is widened to the n-best asked for
    answer = client.post("/api/translate", json={"run": "dates", "text": DATE, "nbest": 5})
    assert len(answer.json()["hypotheses"]) == 5


@pytest.mark.parametrize("path", ["/api/translate", "/api/read"])
@pytest.mark.parametrize("text", ["", "   ", " \t\n "])
def test_empty_or_blank_text_is_422(client, path, text):
    run = "lstmn" if path == "/api/read" else "dates"
    assert refused(client.post(path, json={"run": run, "text": text}), 422) == (
        "text is empty; give a sentence")


@pytest.mark.parametrize("text", ["1" * 201, "ab " * 201, "9" * 30_000])  # the last: in a thread
def test_text_over_max_tokens_is_413(client, text):
    detail = refused(client.post("/api/translate", json={"run": "dates", "text": text}), 413)
    assert "more than the 200 run dates accepts" in detail
    assert client.post("/api/translate", json={"run": "dates", "text": text[:200]}
                       ).status_code == 200


@pytest.mark.parametrize(("body", "expected"), [
    (b'{"run": "dates", "text": "3 Ma\xff 2001"}', "the request body is not valid UTF-8 (byte 30)"),
    (b'{"run": "dates", "text": ', "the request body is not valid JSON"),
    (b'["dates"]', "the request body must be a JSON object"),
    (b'{"run": "dates", "text": "x", "beam": "5"}', "field 'beam': input should be"),
    (b'{"run": "dates", "text": "x", "beam": 2.5}', "field 'beam': input should be"),
    (b'{"run": "dates", "text": 7}', "field 'text': input should be a valid string"),
    (b'{"run": "dates", "text": "x", "level": "char"}', "field 'level': input should be"),
    (b'{"run": "dates", "text": "x", "temperature": 1}',
     "unknown field 'temperature'; fields: run, text, beam, nbest, level"),
    (b'{"run": "dates"}', "field 'text' is required"),
])
def test_invalid_json_bodies_are_422_in_one_sentence(client, body, expected):
    response = client.post("/api/translate", content=body,
                           headers={"content-type": "application/json"})
    assert refused(response, 422).startswith(expected)


def test_a_20_mb_upload_is_413_and_the_server_still_answers(client):
    big = b"\x00" * (20 * 1024 * 1024)
    response = client.post("/api/caption", data={"run": "shapes"},
                           files={"image": ("big.png", big, "image/png")})
    assert "more than the 5,242,880 bytes" in refused(response, 413)
    assert refused(client.post("/api/translate", content=big, headers=JSON_BODY), 413)
    assert client.post("/api/caption", json={"run": "shapes", "example": 0}).status_code == 200


@pytest.mark.parametrize(("width", "height"), [(30000, 30000), (6000, 5000)])
def test_a_decompression_bomb_is_413_before_any_pixel_is_decoded(client, monkeypatch, width,
                                                                 height):
    def no_decoding(*_):
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", no_decoding)
    bomb = declared_png(width, height)
    assert len(bomb) < 100
    response = client.post("/api/caption", data={"run": "shapes"},
                           files={"image": ("bomb.png", bomb, "image/png")})
    assert "more than the 25,000,000 pixels" in refused(response, 413)


def test_an_upload_never_touches_the_disk(client, monkeypatch):
    """A 2 MB part: starlette's UploadFile would spool it to a temporary file."""
    import starlette.formparsers

    def no_files(*_, **__):
        raise AssertionError("a temporary file was created")

    for name in ("TemporaryFile", "NamedTemporaryFile", "SpooledTemporaryFile", "mkstemp",
                 "mkdtemp"):
        monkeypatch.setattr(tempfile, name, no_files)
    monkeypatch.setattr(starlette.formparsers, "SpooledTemporaryFile", no_files)
    noise = np.random.default_rng(0).integers(0, 256, (900, 900, 3), dtype=np.uint8)
    image = png_bytes(Image.fromarray(noise))
    assert 2 * 1024 * 1024 < len(image) < 5 * 1024 * 1024
    response = client.post("/api/caption", data={"run": "shapes"},
                           files={"image": ("noise.png", image, "image/png")})
    assert response.status_code == 200 and response.json()["grid"] == [8, 8]


@pytest.mark.parametrize(("data", "files", "expected"), [
    ({"run": "shapes"}, {"image": ("x.png", b"not an image", "image/png")},
     "the upload is not an image this server reads"),
    ({"run": "shapes"}, {"photo": ("x.png", b"123", "image/png")},
     "the form lacks the field 'image' (fields: run, image)"),
    ({}, {"image": ("x.png", b"123", "image/png")}, "the form lacks the field 'run'"),
])
def test_bad_caption_forms_are_422(client, data, files, expected):
    response = client.post("/api/caption", data=data, files=files)
    assert refused(response, 422).startswith(expected)


def test_an_example_outside_the_test_split_is_422(client):
    detail = refused(client.post("/api/caption", json={"run": "shapes", "example": 3}), 422)
    assert detail == "example must be between 0 and 2 (the run has 3 test images), got 3"
    refused(client.post("/api/caption", json={"run": "shapes", "example": -1}), 422)
    refused(client.post("/api/caption", json={"run": "shapes", "path": "/etc/passwd"}), 422)


def test_unknown_paths_and_methods_keep_the_error_shape(client):
    refused(client.get("/api/nothing"), 404)
    refused(client.get("/api/translate"), 405)


def test_the_page_and_its_folder_are_served(runs, tmp_path, monkeypatch):
    (tmp_path / "index.html").write_text("<title>explorer</title>")
    (tmp_path / "page.js").write_text("let x = 1;")
    monkeypatch.setattr(serve_app, "STATIC_DIR", tmp_path)
    with TestClient(create_app({"dates": runs["dates"]}), base_url=LOCAL) as client:
        assert client.get("/").text == "<title>explorer</title>"
        assert client.get("/static/page.js").text == "let x = 1;"
        refused(client.get("/static/missing.js"), 404)
    monkeypatch.setattr(serve_app, "STATIC_DIR", tmp_path / "absent")
    with TestClient(create_app({"dates": runs["dates"]}), base_url=LOCAL) as client:
        assert "not installed" in refused(client.get("/"), 404)


def test_openapi_documents_every_endpoint_and_field(client):
    schema = client.get("/openapi.json").json()
    assert {"/api/runs", "/api/translate", "/api/caption", "/api/read"} <= set(schema["paths"])
    body = schema["paths"]["/api/translate"]["post"]["requestBody"]["content"]
    fields = body["application/json"]["schema"]["properties"]
    assert list(fields) == ["run", "text", "beam", "nbest", "level", "heads"]
    assert all(field.get("description") for field in fields.values())
    caption = schema["paths"]["/api/caption"]["post"]["requestBody"]["content"]
    assert set(caption) == {"application/json", "multipart/form-data"}


def test_the_docs_page_works_offline(client):
    """/docs uses the vendored Swagger UI, not a CDN: every script and style it names is served
    by the app itself."""
    page = client.get("/docs")
    assert page.status_code == 200
    assets = re.findall(r"(?:src|href)=['\"]([^'\"]+)['\"]", page.text)
    assert "url: '/openapi.json'" in page.text or '"/openapi.json"' in page.text
    assert assets and all(url.startswith("/static/vendor/swagger-ui/") for url in assets)
    for url in assets:
        assert client.get(url).status_code == 200, url


def test_quantized_server_runs_translation_in_int8_and_says_so(runs, dates_run):
    with TestClient(create_app(runs, quantize="int8"), base_url=LOCAL) as client:
        listed = {run["name"]: run["quantized"] for run in client.get("/api/runs").json()}
        assert listed == {"dates": "int8", "plain": "int8", "shapes": None, "lstmn": None}
        answer = client.post("/api/translate", json={"run": "dates", "text": DATE, "beam": 3})
        assert answer.status_code == 200
        served = client.app.state.service.runs["dates"].loaded.model
    assert any("quantized" in type(module).__module__ for module in served.modules())
    expected = TranslationRun.load(dates_run).quantized("int8")
    text = expected.translate([DATE], beam=3)[0].text
    assert answer.json()["hypotheses"][0]["text"] == text
