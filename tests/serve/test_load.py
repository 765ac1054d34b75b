"""The server under load: concurrent requests batched without mixing up answers, a full queue
answered 503 with Retry-After, one log line per request."""

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import attnlab.serve.service as service_module

SENTENCES = ["3 May 2001", "Tuesday, 14 March 1995", "1999-12-31", "12/25/1987", "7 July 1950",
             "Sunday 1 January 2023", "17.04.2044", "March 2, 1960"]
# (beam, nbest, level): three keys, so batches of different settings must stay apart
SETTINGS = [(3, 1, "word"), (3, 2, "piece"), (2, 1, "word")]


def post(client, text, beam=3, nbest=1, level="word"):
    return client.post("/api/translate", json={"run": "dates", "text": text, "beam": beam,
                                               "nbest": nbest, "level": level})


def same_answer(got: dict, expected: dict) -> None:
    assert len(got["hypotheses"]) == len(expected["hypotheses"])
    for mine, alone in zip(got["hypotheses"], expected["hypotheses"], strict=True):
        assert mine["text"] == alone["text"] and mine["tokens"] == alone["tokens"]
        assert mine["source_tokens"] == alone["source_tokens"]
        assert mine["score"] == pytest.approx(alone["score"], abs=1e-4)
        np.testing.assert_allclose(mine["attention"], alone["attention"], atol=1e-4)


class Gate:
    """Holds the worker busy (a job of its own) until opened, so requests pile up behind it."""

    def __init__(self, client):
        self.batcher = client.app.state.service.batcher
        self.started, self.release = threading.Event(), threading.Event()
        self.batcher.submit(("gate",), None, self._hold)
        assert self.started.wait(10)

    def _hold(self, items):
        self.started.set()
        self.release.wait(30)
        return [None] * len(items)

    def wait_for(self, pending: int) -> None:
        deadline = time.monotonic() + 10
        while self.batcher.pending() < pending:
            assert time.monotonic() < deadline, f"{self.batcher.pending()} jobs queued"
            time.sleep(0.005)


def test_concurrent_requests_get_the_answers_they_get_alone(client):
    jobs = [(text, *setting) for text in SENTENCES for setting in SETTINGS]
    alone = [post(client, *job).json() for job in jobs]
    with ThreadPoolExecutor(len(jobs)) as pool:
        together = list(pool.map(lambda job: post(client, *job), jobs))
    assert all(response.status_code == 200 for response in together)
    for job, response, expected in zip(jobs, together, alone, strict=True):
        assert response.json()["hypotheses"][0]["source_tokens"][-1] == "</s>", job
        same_answer(response.json(), expected)


def test_requests_waiting_together_are_one_beam_search(make_client, monkeypatch):
    client = make_client(batch_window_ms=1)
    batches = []
    original = service_module.answer_batch

    def counted(run, requests):
        first = requests[0]
        batches.append((first.beam, first.nbest, first.level,
                        sorted(request.text for request in requests)))
        return original(run, requests)

    monkeypatch.setattr(service_module, "answer_batch", counted)
    alone = {text: post(client, text).json() for text in SENTENCES}
    batches.clear()
    gate = Gate(client)
    with ThreadPoolExecutor(len(SENTENCES) + 1) as pool:
        answers = [pool.submit(post, client, text) for text in SENTENCES]
        other = pool.submit(post, client, SENTENCES[0], 2)  # another beam: another batch
        gate.wait_for(len(SENTENCES) + 1)
        gate.release.set()
        for text, answer in zip(SENTENCES, answers, strict=True):
            same_answer(answer.result().json(), alone[text])
        assert other.result().status_code == 200
    # (the two keys may have arrived in either order)
    assert sorted(batches) == [(2, 1, "word", [SENTENCES[0]]), (3, 1, "word", sorted(SENTENCES))]


def test_max_batch_caps_a_batch(make_client, monkeypatch):
    client = make_client(max_batch=3)
    sizes = []
    original = service_module.answer_batch
    monkeypatch.setattr(service_module, "answer_batch", lambda run, requests: sizes.append(
        len(requests)) or original(run, requests))
    gate = Gate(client)
    with ThreadPoolExecutor(len(SENTENCES)) as pool:
        answers = [pool.submit(post, client, text) for text in SENTENCES]
        gate.wait_for(len(SENTENCES))
        gate.release.set()
        assert all(answer.result().status_code == 200 for answer in answers)
    assert sizes == [3, 3, 2]


def test_a_full_queue_is_503_with_retry_after(make_client):
    client = make_client(queue_size=1)
    gate = Gate(client)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(post, client, SENTENCES[0])
        gate.wait_for(1)
        response = post(client, SENTENCES[1])
        assert response.status_code == 503
        assert response.headers["retry-after"] == "1"
        assert response.json() == {"detail": "the server is busy (1 requests are waiting); try "
                                   "again shortly"}
        gate.release.set()
        assert waiting.result().status_code == 200
    assert post(client, SENTENCES[1]).status_code == 200  # room again


def test_one_log_line_per_request(client, caplog):
    caplog.set_level(logging.INFO, logger="attnlab.serve")
    post(client, SENTENCES[0])
    client.post("/api/translate", json={"run": "nope", "text": "x"})
    client.get("/api/runs")
    lines = [r.getMessage() for r in caplog.records if r.name == "attnlab.serve"]
    assert len(lines) == 3
    for line, (method, path, status) in zip(lines, [("POST", "/api/translate", 200),
                                                    ("POST", "/api/translate", 404),
                                                    ("GET", "/api/runs", 200)], strict=True):
        words = line.split()
        assert words[:3] == [method, path, str(status)] and words[4] == "ms"
        assert float(words[3]) >= 0
