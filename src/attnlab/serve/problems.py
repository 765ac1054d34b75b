"""A request the server refuses: its HTTP status and one sentence for the JSON `detail`."""

from __future__ import annotations


class RequestError(Exception):
    """Raised anywhere while answering a request; the app turns it into
    {"detail": message} with `status` (and `headers`, e.g. Retry-After)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def invalid(message: str) -> RequestError:
    """422: the request is well-formed HTTP but its content is not acceptable."""
    return RequestError(422, message)


def too_large(message: str) -> RequestError:
    """413: the request (body, text or image) is over one of the server's limits."""
    return RequestError(413, message)


def quoted(text: str, limit: int = 40) -> str:
    """What a request sent, inside a detail: in quotes, cut to `limit` characters and with
    anything unprintable escaped, so the detail stays one short line whatever was sent."""
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    escaped = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                      for c in shown)
    return f"'{escaped}'"
