"""A local HTTP server for the downloaders' tests: no test touches the internet."""

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


class CountingHandler(SimpleHTTPRequestHandler):
    """Serves a directory and records each requested path on the server."""

    def do_GET(self):
        self.server.requests.append(self.path)
        super().do_GET()

    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture
def serve():
    """serve(directory) -> (base_url, list of requested paths); servers stop after the test."""
    servers = []

    def start(directory: Path):
        handler = functools.partial(CountingHandler, directory=str(directory))
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.requests = []
        # A short poll interval: shutdown() waits up to one interval.
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", server.requests

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
