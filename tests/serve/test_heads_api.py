"""POST /api/translate with heads: true: a Transformer run answers every layer and head of each
hypothesis (their last layer's mean is its attention), at words or pieces; GET /api/runs says
which runs have heads; a run without them refuses the option in one sentence."""

import numpy as np
import pytest

from heads_run import HEADS, LAYERS, transformer_run

from .conftest import open_client

pytestmark = pytest.mark.slow  # trains a run


@pytest.fixture(scope="module")
def client(tmp_path_factory, dates_run):
    runs = {"tf": transformer_run(tmp_path_factory.mktemp("transformer")), "dates": dates_run}
    with open_client(runs) as client:
        yield client


def test_runs_say_which_have_heads(client):
    listed = {run["name"]: run["heads"] for run in client.get("/api/runs").json()}
    assert listed == {"tf": [LAYERS, HEADS], "dates": None}


@pytest.mark.parametrize("level", ["piece", "word"])
def test_every_layer_and_head_of_each_hypothesis(client, level):
    answer = client.post("/api/translate", json={"run": "tf", "text": "3 March 1999",
                                                 "beam": 3, "nbest": 2, "level": level,
                                                 "heads": True})
    assert answer.status_code == 200
    for hypothesis in answer.json()["hypotheses"]:
        heads = np.asarray(hypothesis["heads"])
        assert heads.shape == (LAYERS, HEADS, len(hypothesis["tokens"]),
                               len(hypothesis["source_tokens"]))
        np.testing.assert_allclose(heads[-1].mean(0), hypothesis["attention"], atol=1e-4)
    plain = client.post("/api/translate", json={"run": "tf", "text": "3 March 1999"}).json()
    assert "heads" not in plain["hypotheses"][0]  # only when asked for


def test_a_run_without_heads_refuses_them(client):
    answer = client.post("/api/translate", json={"run": "dates", "text": "3 March 1999",
                                                 "heads": True})
    assert answer.status_code == 422  # as every request a run refuses (serve/problems.py)
    assert answer.json()["detail"].startswith("heads: a layer and head are chosen from a "
                                              "Transformer's cross-attention")
