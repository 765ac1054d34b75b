"""Downloads that break off, against a local HTTP server that misbehaves on purpose: a body
shorter than its Content-Length, a connection reset mid-file or closed before any answer. Each is
reported as a broken transfer (bytes received of bytes announced) and tried again; only a file
that arrived whole is compared with its digest. No test touches the internet."""

from __future__ import annotations

import hashlib
import re
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from attnlab.cli import main
from attnlab.data import download
from attnlab.data.download import fetch_files
from attnlab.errors import DataError

BODY = bytes(range(256)) * 4  # 1,024 bytes
SHA = {"file.bin": hashlib.sha256(BODY).hexdigest()}


class Misbehaving(BaseHTTPRequestHandler):
    """Answers request n with the server's plan[n] (the last one from then on): "whole",
    "short" (400 bytes of a 1,024-byte Content-Length, then a clean close), "reset" (400 bytes,
    then a TCP reset), "silent" (a close before any answer) or "other" (a whole other file)."""

    def do_GET(self):
        plan, requests = self.server.plan, self.server.requests
        requests.append(self.path)
        how = plan[min(len(requests), len(plan)) - 1]
        if how == "silent":
            self.close_connection = True
            return
        body = b"x" * len(BODY) if how == "other" else BODY
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body if how in ("whole", "other") else body[:400])
        self.wfile.flush()
        if how == "reset":  # SO_LINGER 0: close() sends RST instead of FIN
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()

    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture
def server():
    """server(*plan) -> (base_url, list of requested paths), answering as Misbehaving does."""
    servers = []

    def start(*plan: str):
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Misbehaving)
        httpd.plan, httpd.requests = plan, []
        httpd.handle_error = lambda *args: None  # a reset socket is what we meant
        threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}", httpd.requests

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def test_a_short_body_is_a_broken_transfer_not_a_checksum_error(server, tmp_path):
    url, requests = server("short")
    with pytest.raises(DataError) as error:
        fetch_files(tmp_path / "dest", SHA, base_url=url, dataset="toy", progress=None,
                    retry_delays=(0, 0))
    assert str(error.value) == (
        f"the download of {url}/file.bin broke off on each of 3 tries, the last time after 400 "
        f"of 1,024 bytes (the server closed the connection early), so nothing was written; try "
        f"again later, or use --from DIR with a local copy of the toy files")
    assert requests == ["/file.bin"] * 3
    assert not (tmp_path / "dest").exists()


def test_a_reset_connection_is_a_broken_transfer(server, tmp_path):
    url, requests = server("reset")
    with pytest.raises(DataError) as error:
        fetch_files(tmp_path / "dest", SHA, base_url=url, progress=None, retry_delays=())
    # The reset may discard what was sent, the headers too (then nothing was announced).
    assert re.fullmatch(rf"the download of {url}/file\.bin broke off after (\d+ of 1,024|0) "
                        r"bytes \(the connection was reset\), so nothing was written; .*",
                        str(error.value))
    assert "SHA-256" not in str(error.value) and requests == ["/file.bin"]


@pytest.mark.parametrize("first", ["short", "reset", "silent"])
def test_a_transfer_that_breaks_off_once_is_tried_again(server, tmp_path, first):
    url, requests = server(first, "whole")
    lines = []
    paths = fetch_files(tmp_path, SHA, base_url=url, progress=lines.append, retry_delays=(0.01,))
    assert paths["file.bin"].read_bytes() == BODY and requests == ["/file.bin"] * 2
    assert re.fullmatch(r"file\.bin: the transfer broke off after (\d+ of 1,024|0) bytes "
                        r"\(.+\); trying again in 0\.01 s", lines[0])
    assert lines[1:] == ["file.bin: downloaded, 1,024 bytes"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.bin"]  # no .part left


def test_retries_wait_longer_each_time(server, tmp_path, monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr(download, "time", SimpleNamespace(sleep=waits.append))
    url, requests = server("short", "short", "short", "whole")
    fetch_files(tmp_path, SHA, base_url=url, progress=None)
    assert waits == list(download.RETRY_DELAYS_S) and waits == sorted(waits)
    assert len(requests) == 4


def test_a_whole_file_with_another_digest_keeps_the_checksum_message(server, tmp_path):
    url, requests = server("other")
    with pytest.raises(DataError) as error:
        fetch_files(tmp_path / "dest", SHA, base_url=url, dataset="toy", progress=None,
                    retry_delays=(0, 0))
    other = hashlib.sha256(b"x" * len(BODY)).hexdigest()
    assert str(error.value) == (
        f"downloaded file.bin from {url}/file.bin has SHA-256 {other}, expected "
        f"{SHA['file.bin']}; the server's file is not the known toy release, so nothing was "
        f"written")
    assert requests == ["/file.bin"]  # a whole file is not fetched again


def test_the_data_command_says_the_transfer_broke_off(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(download, "RETRY_DELAYS_S", (0.0,))
    url, requests = server("short")
    assert main(["data", "rwth-gold", "--dest", str(tmp_path / "gold"), "--base-url", url]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith(f"attnlab: error: the download of {url}/test.de-en broke "
                                   f"off on each of 2 tries, the last time after 400 of 1,024 "
                                   f"bytes (the server closed the connection early)")
    assert "trying again in 0 s" in captured.out and len(requests) == 2
