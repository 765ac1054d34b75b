"""POST /api/explain: attention beside the attributions of one output, the Run's own explanation
as JSON; bounded like the other endpoints (pieces, integrated gradients' steps, a time budget);
a run whose task has no explain, an int8 run's gradients and bad input refused in one sentence."""

from typing import get_args

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from attnlab.explain.attribution import METHODS, STEPS
from attnlab.serve import Limits, create_app
from attnlab.serve.budget import OverBudget, within
from attnlab.serve.schemas import Method
from attnlab.translation import TranslationRun

from .conftest import LOCAL
from .test_api import refused

DATE = "3 May 2001"
KEYS = {"source", "text", "source_pieces", "target_pieces", "log_probs",
        "integrated_gradients_steps", "integrated_gradients_gap",
        "integrated_gradients_tolerance", "integrated_gradients_capped",
        "integrated_gradients_stepped", "baseline", "views"}


def explain(client, **body):
    return client.post("/api/explain", json={"run": "dates", "text": DATE, **body})


@pytest.fixture(scope="module")
def library(dates_run):
    return TranslationRun.load(dates_run)


def test_explain_answers_the_runs_own_explanation(client, library):
    answer = explain(client, steps=4)
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert set(found) == KEYS
    expected = library.explain(DATE, steps=4)
    assert found["text"] == expected.text == library.translate([DATE])[0].text
    assert found["source_pieces"] == expected.source_pieces == [*DATE, "</s>"]
    assert found["target_pieces"] == expected.target_pieces
    assert list(found["views"]) == ["attention", *METHODS]
    shape = (len(found["target_pieces"]), len(found["source_pieces"]))
    for name, values in found["views"].items():
        assert np.shape(values) == shape, name
        np.testing.assert_allclose(values, expected.views[name], atol=1e-6, err_msg=name)
    assert found["integrated_gradients_steps"] == 4
    np.testing.assert_allclose(np.sum(found["views"]["attention"], axis=1), 1, atol=1e-5)


def test_a_target_is_forced_and_one_method_costs_one(client, library):
    target = "2001-05-03"
    answer = explain(client, target=target, methods=["erasure"])
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["text"] == target and found["target_pieces"] == [*target, "</s>"]
    assert list(found["views"]) == ["attention", "erasure"]
    expected = library.explain(DATE, target, methods=["erasure"])
    np.testing.assert_allclose(found["views"]["erasure"], expected.views["erasure"], atol=1e-6)
    # methods [] gives the forced attention alone; an empty target is the output "</s>"
    found = explain(client, target="", methods=[]).json()
    assert list(found["views"]) == ["attention"] and found["target_pieces"] == ["</s>"]


def test_a_run_without_attention_is_explained_by_its_attributions(client):
    answer = client.post("/api/explain", json={"run": "plain", "text": "Zwei Männer spielen .",
                                               "methods": ["gradient"]})
    assert answer.status_code == 200, answer.text
    assert list(answer.json()["views"]) == ["gradient"]
    detail = refused(client.post("/api/explain", json={"run": "plain", "text": "Zwei",
                                                      "methods": []}), 422)
    assert detail == "run plain has no attention: ask for at least one method"


@pytest.mark.parametrize(("run", "kind"), [("shapes", "a captioning model"),
                                           ("lstmn", "a language model")])
def test_a_run_whose_task_has_no_explain_is_refused_in_one_sentence(client, run, kind):
    detail = refused(client.post("/api/explain", json={"run": run, "text": "a red circle"}), 422)
    assert detail == f"run {run} is {kind}; /api/explain explains translation runs only"


def test_the_runs_say_what_they_explain_by(client):
    listed = {run["name"]: run["explains"] for run in client.get("/api/runs").json()}
    assert listed == {"dates": list(METHODS), "plain": list(METHODS), "shapes": [], "lstmn": []}


@pytest.mark.parametrize(("body", "status", "detail"), [
    ({"steps": 0}, 422, "steps must be between 1 and 64, got 0"),
    ({"steps": 65}, 422, "steps must be between 1 and 64, got 65"),
    ({"text": "   "}, 422, "text is empty; give a sentence"),
    ({"run": "nope"}, 404, "unknown run 'nope'; runs: dates, plain, shapes, lstmn"),
    ({"methods": ["saliency"]}, 422, "field 'methods.0': input should be 'gradient', "
     "'integrated_gradients' or 'erasure'"),
    ({"level": "word"}, 422, "unknown field 'level'; fields: run, text, target, methods, steps"),
    ({"target": 3}, 422, "field 'target': input should be a valid string"),
])
def test_bad_input_is_refused_in_one_sentence(client, body, status, detail):
    assert refused(explain(client, **body), status) == detail


def test_the_text_and_the_target_are_held_to_max_tokens(make_client):
    small = make_client(max_tokens=12)
    assert refused(explain(small, text="3 May 2001 and more"), 413) == (
        "text has 19 pieces, more than the 12 run dates accepts")
    assert refused(explain(small, target="2001-05-03 and so on"), 413) == (
        "target has 20 pieces, more than the 12 run dates accepts")
    assert refused(explain(small, target="a " * 13), 413).startswith(
        "target has at least 13 pieces (one a word)")


def test_steps_are_held_to_the_servers_limit(make_client):
    assert refused(explain(make_client(max_explain_steps=8), steps=9), 422) == (
        "steps must be between 1 and 8, got 9")


def test_an_explanation_past_its_time_budget_is_refused_and_leaves_the_model_as_it_was(
        make_client, client):
    hasty = make_client(explain_budget_s=1e-6)
    detail = refused(explain(hasty), 413)
    assert detail == ("the explanation took longer than this server's 1e-06 s for one; ask for "
                      "fewer methods or integrated-gradients steps, or a shorter sentence")
    model = hasty.app.state.service.runs["dates"].loaded.model
    assert not any(module._forward_pre_hooks or module._forward_hooks
                   for module in model.modules())
    assert all(parameter.requires_grad for parameter in model.parameters())
    body = {"run": "dates", "text": DATE, "level": "piece"}
    after = hasty.post("/api/translate", json=body).json()
    assert after == client.post("/api/translate", json=body).json()


def test_an_int8_run_explains_by_erasure_only(dates_run):
    app = create_app({"dates": dates_run}, Limits(), quantize="int8")
    with TestClient(app, base_url=LOCAL) as client:
        assert client.get("/api/runs").json()[0]["explains"] == ["erasure"]
        detail = refused(explain(client, methods=["erasure", "gradient"]), 422)
        assert detail == ("run dates runs in int8, which has no gradients: it can explain by "
                          "erasure only, not gradient")
        answer = explain(client, methods=["erasure"])
        assert answer.status_code == 200 and list(answer.json()["views"]) == [
            "attention", "erasure"]


def test_the_schema_names_the_runs_that_explain_and_the_steps_limit(client):
    paths = client.get("/openapi.json").json()["paths"]
    request = paths["/api/explain"]["post"]["requestBody"]["content"]["application/json"]
    fields = request["schema"]["properties"]
    assert fields["run"]["enum"] == ["dates", "plain"]
    assert (fields["steps"]["minimum"], fields["steps"]["maximum"]) == (1, 64)
    assert fields["steps"]["default"] == STEPS and fields["text"]["minLength"] == 1
    assert set(paths["/api/explain"]["post"]["responses"]) == {
        "200", "400", "404", "413", "415", "422", "503"}
    assert get_args(Method) == METHODS  # the API's methods are the library's


def test_within_stops_a_model_at_its_next_layer_and_removes_its_hooks():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    with within(model, 60):
        model(torch.ones(1, 2))   # inside its budget
    with pytest.raises(OverBudget), within(model, 1e-9):
        model(torch.ones(1, 2))
    assert not any(module._forward_pre_hooks for module in model.modules())
