"""The API fuzzed from its own schema: schemathesis reads /openapi.json of a live `attnlab serve`
(a subprocess on a free port, serving the tiny runs of conftest.py) and sends each endpoint a
bounded number of generated requests, valid and invalid, derandomized. It fails on any 5xx,
any status or body the schema does not document, invalid data accepted or valid data refused
for its shape, and an error detail that is not one sentence (or carries a Python repr).
`pytest -s` prints how many requests it sent, by endpoint, mode and status."""

import json
import os
import re
import select
import subprocess
import sys

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

EXAMPLES = 40  # per endpoint and phase: well under a minute on one core
CASES = []  # ("METHOD path mode", status) of every request sent
REPR = re.compile(r"<[^<>]* at 0x[0-9a-f]+>|\b(?:b'|Traceback)")


@pytest.fixture(scope="module")
def live_server(runs, tmp_path_factory):
    """`attnlab serve` over the tiny runs; its URL once it says it serves."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    named = [f"--run={name}={run}" for name, run in runs.items()]
    command = [sys.executable, "-m", "attnlab", "serve", "--port=0", "--threads=1", *named]
    with open(log, "w") as errors:
        server = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
    try:
        ready = select.select([server.stdout], [], [], 120)[0]  # loading the runs: seconds
        line = server.stdout.readline() if ready else "(nothing in 120 s)"
        found = re.search(r" on (http://127\.0\.0\.1:\d+)/ ", line)
        assert found, f"{line!r}; {log.read_text()}"
        yield found[1]
    finally:
        server.terminate()
        server.wait(timeout=30)
    counts = {}
    for operation, status in CASES:
        counts.setdefault(operation, {}).setdefault(status, 0)
        counts[operation][status] += 1
    print(f"\nschemathesis: {len(CASES)} requests: {json.dumps(counts, sort_keys=True)}")
    assert " 500 " not in log.read_text(), log.read_text()


@pytest.fixture(scope="module")
def api_schema(live_server):
    return schemathesis.openapi.from_url(f"{live_server}/openapi.json")


def one_sentence_detail(ctx, response, case):
    """Every error is {"detail": one line, one sentence, no Python repr, not huge}."""
    if response.status_code < 400:
        return None
    body = response.json()
    assert set(body) == {"detail"} and isinstance(body["detail"], str), body
    detail = body["detail"]
    assert detail and "\n" not in detail and len(detail) < 400, detail
    assert not re.search(r"[.!?] [A-Z]", detail), f"more than one sentence: {detail}"
    assert not REPR.search(detail), f"a Python repr: {detail}"
    return None


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    one_sentence_detail,
]
# What valid data may be refused with: a limit (413), a full queue (503), or (422) a value the
# schema cannot express: blank text, nbest over the beam, an example past the test split, bytes
# that are no image. Never for its shape: that would be the schema and the server disagreeing.
VALID_REFUSALS = {413, 422, 503}
SHAPE = re.compile(r"input should be|is required|unknown field|not valid (JSON|UTF)|JSON object")
# Every operation of the schema (the first test holds the list to it), in the modes it has:
# GET /api/runs takes nothing that could be invalid. schemathesis's own pytest loader for a
# schema known only at run time (from_fixture) fails on pytest 9.2 (request.node._nodeid is
# gone), so each operation's strategy is run with Hypothesis here.
OPERATIONS = [
    ("GET", "/api/runs"),
    ("POST", "/api/translate"),
    ("POST", "/api/caption"),
    ("POST", "/api/read"),
    ("POST", "/api/explain"),
]
CALLS = [
    (*operation, mode)
    for operation in OPERATIONS
    for mode in GenerationMode
    if operation[0] == "POST" or mode is GenerationMode.POSITIVE
]


def test_every_operation_is_fuzzed(api_schema):
    found = [result.ok() for result in api_schema.get_all_operations()]
    assert sorted((op.method.upper(), op.path) for op in found) == sorted(OPERATIONS)


@pytest.mark.parametrize(("method", "path", "mode"), CALLS)
def test_the_api_keeps_to_its_schema(api_schema, method, path, mode):
    operation = api_schema[path][method]

    @given(case=operation.as_strategy(mode))
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def call(case):
        response = case.call_and_validate(checks=CHECKS)
        CASES.append((f"{method} {path} {mode.value}", response.status_code))
        if mode is GenerationMode.POSITIVE and response.status_code >= 400:
            detail = response.json()["detail"]
            assert response.status_code in VALID_REFUSALS, detail
            assert not SHAPE.search(detail), f"valid data refused for its shape: {detail}"

    call()


# What the fuzzing found on the way, kept as plain tests.


def test_a_whole_number_written_as_a_float_is_an_integer(client):
    """JSON Schema's integer includes 16.0; a strict parser refused it for its type."""
    answer = client.post(
        "/api/translate", json={"run": "dates", "text": "3 May 2001", "beam": 3.0, "nbest": 2.0}
    )
    assert answer.status_code == 200 and len(answer.json()["hypotheses"]) == 2
    assert client.post("/api/caption", json={"run": "shapes", "example": 1.0}).status_code == 200
    for beam in ("3", 2.5, True):
        answer = client.post("/api/translate", json={"run": "dates", "text": "x", "beam": beam})
        assert answer.status_code == 422, beam


@pytest.mark.parametrize(
    ("field", "run"), [("beam", "dates"), ("nbest", "dates"), ("example", "shapes")]
)
def test_a_huge_number_is_not_echoed_whole(client, field, run):
    body = {"run": run, "text": "3 May 2001", field: 10**4000}
    if field == "example":
        body.pop("text")
    response = client.post("/api/caption" if field == "example" else "/api/translate", json=body)
    assert response.status_code == 422
    assert response.json()["detail"].endswith("got a number of 4001 digits")


def test_the_schema_names_the_runs_and_limits(client):
    """So that /docs offers them and a fuzzer reaches the models instead of 404s."""
    paths = client.get("/openapi.json").json()["paths"]
    fields = paths["/api/translate"]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]["properties"]
    assert fields["run"]["enum"] == ["dates", "plain"] and fields["text"]["minLength"] == 1
    assert fields["nbest"]["maximum"] == 16 and fields["beam"]["anyOf"][0]["minimum"] == 1
    caption = paths["/api/caption"]["post"]["requestBody"]["content"]
    assert caption["multipart/form-data"]["schema"]["properties"]["run"]["enum"] == ["shapes"]
    assert set(paths["/api/read"]["post"]["responses"]) == {
        "200",
        "400",
        "404",
        "413",
        "415",
        "422",
        "503",
    }
    assert set(paths["/api/runs"]["get"]["responses"]) == {"200", "400"}
