"""Bodies read under the cap: refused from Content-Length before a byte is read, or as soon as
the stream passes the cap (a 20 MB body is never held whole); multipart parsed in memory."""

import asyncio

import pytest
from starlette.requests import Request

from attnlab.serve.bodies import parse_multipart, read_body
from attnlab.serve.problems import RequestError

CHUNK = 64 * 1024


def streamed(total: int, headers=()):
    """A request whose body arrives in 64 KiB chunks; .sent counts the chunks handed over."""
    sent = []

    async def receive():
        sent.append(1)
        left = total - CHUNK * (len(sent) - 1)
        return {"type": "http.request", "body": b"x" * min(CHUNK, max(left, 0)),
                "more_body": left > CHUNK}

    scope = {"type": "http", "method": "POST", "path": "/", "headers": list(headers)}
    return Request(scope, receive), sent


def test_a_declared_length_over_the_cap_is_refused_before_reading():
    request, sent = streamed(20 * 1024 * 1024, [(b"content-length", b"20971520")])
    with pytest.raises(RequestError) as refused:
        asyncio.run(read_body(request, 5 * 1024 * 1024))
    assert refused.value.status == 413 and sent == []


def test_a_stream_over_the_cap_stops_being_read_at_the_cap():
    request, sent = streamed(20 * 1024 * 1024)  # chunked: no Content-Length
    with pytest.raises(RequestError) as refused:
        asyncio.run(read_body(request, 5 * 1024 * 1024))
    assert refused.value.status == 413
    assert len(sent) == 5 * 1024 * 1024 // CHUNK + 1  # one chunk past the cap, not 320


def test_a_body_within_the_cap_is_read_whole():
    request, sent = streamed(3 * CHUNK + 5)
    assert len(asyncio.run(read_body(request, 4 * CHUNK))) == 3 * CHUNK + 5


def test_multipart_fields_are_parsed_in_memory():
    body = (b"--XyZ\r\nContent-Disposition: form-data; name=\"run\"\r\n\r\nshapes\r\n"
            b"--XyZ\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n"
            b"Content-Type: image/png\r\n\r\n\x89PNG\r\n\x00\xff\r\n--XyZ--\r\n")
    fields = parse_multipart(body, "multipart/form-data; boundary=XyZ")
    assert fields == {"run": b"shapes", "image": b"\x89PNG\r\n\x00\xff"}
    with pytest.raises(RequestError, match="no boundary"):
        parse_multipart(body, "multipart/form-data")
