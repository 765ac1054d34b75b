"""A server safe by default: only requests naming an allowed host are answered (a DNS-rebinding
page names its own), the JSON endpoints read only JSON (a cross-site text/plain POST gets 415,
before any model runs), a host beyond loopback is one warning line, a port in use is one
sentence and no "serving" line, and counts in details are exact or say "at least"."""

import asyncio
import socket

import pytest
from fastapi.testclient import TestClient

import attnlab.serve.service as service_module
from attnlab.cli import main
from attnlab.serve import create_app, listen
from attnlab.serve.hosts import HostCheck, allowed_names

from .conftest import LOCAL
from .test_api import refused

DATE = "3 May 2001"
SERVES = "and this server answers only to localhost, 127.0.0.1, [::1]"


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "attacker.example:8000",
        "127.0.0.2",
        "localhost.attacker.example",
        "[::2]:8000",
        "0.0.0.0:8000",
        "local host",
        "",
    ],
)
def test_a_request_naming_another_host_is_400(client, host):
    for response in (
        client.get("/api/runs", headers={"host": host}),
        client.post("/api/translate", json={"run": "dates", "text": DATE}, headers={"host": host}),
        client.get("/", headers={"host": host}),
    ):
        detail = refused(response, 400)
        assert detail.startswith("the request has the Host header '") and SERVES in detail
        assert detail.endswith("(attnlab serve --allowed-host adds names)")


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "localhost:8000",
        "LOCALHOST:1",
        "localhost.",
        "127.0.0.1",
        "127.0.0.1:65535",
        "[::1]",
        "[::1]:8000",
    ],
)
def test_loopback_names_are_answered_on_any_port(client, host):
    assert client.get("/api/runs", headers={"host": host}).status_code == 200


def test_a_request_without_a_host_header_is_400():
    sent = []

    async def send(message):
        sent.append(message)

    async def never(*_):
        raise AssertionError("the app was reached")

    scope = {"type": "http", "method": "GET", "path": "/api/runs", "headers": []}
    asyncio.run(HostCheck(never, allowed_names("127.0.0.1"))(scope, None, send))
    assert sent[0]["status"] == 400
    assert sent[1]["body"].startswith(b'{"detail":"the request has no Host header, and this')


def test_allowed_hosts_are_answered_and_only_they(runs):
    app = create_app(
        {"dates": runs["dates"]}, allowed_hosts=["Explorer.Lab", "10.1.2.3", "fe80::1", "[fe80::2]"]
    )
    with TestClient(app, base_url=LOCAL) as client:
        for host in ("explorer.lab:8000", "10.1.2.3", "[fe80::1]:80", "[fe80::2]", "localhost"):
            assert client.get("/api/runs", headers={"host": host}).status_code == 200, host
        detail = refused(client.get("/api/runs", headers={"host": "lab:8000"}), 400)
        assert (
            "answers only to localhost, 127.0.0.1, [::1], explorer.lab, 10.1.2.3, "
            "[fe80::1], [fe80::2] (" in detail
        )


def test_an_allowed_host_with_a_port_is_refused_in_one_sentence(runs, capsys):
    assert main(["serve", "--run", str(runs["dates"]), "--allowed-host", "lab:8000"]) == 2
    assert capsys.readouterr().err == (
        "attnlab: error: --allowed-host lab:8000: give a host "
        "name or an IP address (without a port)\n"
    )


@pytest.mark.parametrize(
    ("path", "body", "accepted"),
    [
        ("/api/translate", '{"run": "dates", "text": "3 May 2001"}', "application/json"),
        ("/api/read", '{"run": "lstmn", "text": "the cat ."}', "application/json"),
        (
            "/api/caption",
            '{"run": "shapes", "example": 0}',
            "application/json or multipart/form-data",
        ),
    ],
)
@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", None],
)
def test_a_body_that_is_not_json_is_415_before_any_work(
    client, monkeypatch, path, body, accepted, content_type
):
    """What a page on another site can post without the browser asking first."""
    monkeypatch.setattr(service_module.Service, "_submit", None)  # no model may run
    headers = {"content-type": content_type} if content_type else {}
    detail = refused(client.post(path, content=body, headers=headers), 415)
    sent = (
        f"Content-Type '{content_type.split(';')[0].lower()}'"
        if content_type
        else "no Content-Type"
    )
    assert detail == f"the request has {sent}; this endpoint reads {accepted}"


def test_json_with_a_charset_is_json(client):
    response = client.post(
        "/api/translate",
        content=f'{{"run": "dates", "text": "{DATE}"}}',
        headers={"content-type": "Application/JSON; charset=utf-8"},
    )
    assert response.status_code == 200


def test_counts_in_details_are_exact_or_say_at_least(client):
    """A character model: 5,000 words of 5 characters are 25,000 pieces; the early refusal
    counts only the words, and says so."""
    many = refused(
        client.post("/api/translate", json={"run": "dates", "text": "abcd " * 5000}), 413
    )
    assert many == (
        "text has at least 5,000 pieces (one a word), more than the 200 run dates accepts"
    )
    counted = refused(client.post("/api/translate", json={"run": "dates", "text": "1" * 250}), 413)
    assert counted == "text has 250 pieces, more than the 200 run dates accepts"


def test_what_a_request_sent_is_quoted_short_in_the_detail(client):
    detail = refused(
        client.post("/api/translate", json={"run": "x\n" * 100_000, "text": DATE}), 404
    )
    assert detail.startswith("unknown run 'x\\nx\\nx\\n") and "…'; runs: dates, " in detail
    assert len(detail) < 120


@pytest.fixture
def started(monkeypatch, capsys):
    """serve() not run: what it got, whether its socket was listening then, and what had been
    printed by then."""
    calls = []

    def serve(app, sock):
        with socket.create_connection(sock.getsockname()[:2], timeout=5):
            pass  # listening before uvicorn
        calls.append((app, sock.getsockname()[:2], capsys.readouterr()))
        sock.close()

    monkeypatch.setattr(listen, "serve", serve)
    return calls


def test_serving_is_said_once_the_port_is_bound(runs, started):
    assert main(["serve", "--run", str(runs["dates"]), "--port", "0"]) == 0
    ((_, (_, port), printed),) = started
    assert printed.out == (
        f"attnlab serve: serving dates on http://127.0.0.1:{port}/ (API docs: /docs)\n"
    )


def test_a_host_beyond_loopback_is_one_warning_line(runs, started):
    assert (
        main(
            [
                "serve",
                "--run",
                str(runs["dates"]),
                "--host",
                "0.0.0.0",
                "--port",
                "0",
                "--allowed-host",
                "lab.example",
            ]
        )
        == 0
    )
    ((app, (_, port), printed),) = started
    assert printed.err == (
        f"attnlab serve: warning: listening on every network interface of "
        f"this machine, without authentication: anyone who can connect to "
        f"port {port} can use these models; requests are answered only when "
        f"their Host is localhost, 127.0.0.1, [::1], lab.example (add names "
        f"with --allowed-host)\n"
    )
    assert printed.out.startswith(f"attnlab serve: serving dates on http://0.0.0.0:{port}/")
    with TestClient(app, base_url="http://lab.example:8000") as client:
        assert client.get("/api/runs").status_code == 200


def test_a_port_in_use_is_one_sentence_and_no_serving_line(runs, started, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--run", str(runs["dates"]), "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and started == []
    assert err == (
        f"attnlab: error: port {port} on 127.0.0.1 is in use by another program; "
        f"stop it or choose another --port\n"
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["--host", "no.such.host.invalid"],
            "--host no.such.host.invalid: not an address of this machine or a name it resolves",
        ),
        (
            ["--host", "192.0.2.1"],
            "--host 192.0.2.1: no network interface of this machine has that address",
        ),
    ],
)
def test_an_address_that_cannot_be_bound_is_one_sentence(runs, started, capsys, argv, expected):
    assert main(["serve", "--run", str(runs["dates"]), "--port", "0", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and started == [] and err == f"attnlab: error: {expected}\n"


def test_a_port_out_of_range_is_refused_by_the_parser(runs, capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--run", str(runs["dates"]), "--port", "70000"])
    assert "70000 is not a port (0 to 65535)" in capsys.readouterr().err
