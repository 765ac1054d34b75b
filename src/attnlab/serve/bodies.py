"""Request bodies read into memory under a size cap and parsed there: JSON into a pydantic
model, multipart forms into fields. Nothing a request sends touches the disk (starlette's
UploadFile would spool a large part to a temporary file), and every mistake is one sentence.
Only the media types an endpoint reads are read at all (415 for the others)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ValidationError
from python_multipart.multipart import MultipartParseError, MultipartParser, parse_options_header
from starlette.requests import Request

from .problems import RequestError, invalid, quoted, too_large

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

M = TypeVar("M", bound=BaseModel)
MAX_PARTS = 8  # a caption form has two fields; anything much larger is not one
JSON, MULTIPART = "application/json", "multipart/form-data"


def require_media_type(request: Request, *accepted: str) -> None:
    """415 unless the body's Content-Type is one of `accepted`. A page on another site may post
    text/plain or a form to any address without the browser asking first (JSON it may not), so
    a JSON endpoint that read any body would answer it."""
    given = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if given in accepted:
        return
    sent = f"Content-Type {quoted(given)}" if given else "no Content-Type"
    raise RequestError(415, f"the request has {sent}; this endpoint reads "
                            f"{' or '.join(accepted)}")


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refused with 413 as soon as it is known to exceed `limit` bytes: from
    Content-Length before reading, else while the stream arrives (never held whole)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(f"the request body is {int(declared):,} bytes, more than the "
                        f"{limit:,} bytes this server accepts")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(f"the request body is more than the {limit:,} bytes this server "
                            f"accepts")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(body: bytes, model: type[M]) -> M:
    """A JSON object body as `model` (unknown fields and wrong types refused), or 422."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise invalid(f"the request body is not valid UTF-8 (byte {error.start})") from None
    try:
        return model.model_validate_json(text)
    except ValidationError as error:
        raise invalid(describe(error, model)) from None


def describe(error: ValidationError, model: type[BaseModel]) -> str:
    """The first problem pydantic found, as one sentence naming the field."""
    first = error.errors(include_url=False)[0]
    kind, where = first["type"], ".".join(str(part) for part in first["loc"])
    if kind == "json_invalid":
        return f"the request body is not valid JSON ({first['ctx'].get('error', 'malformed')})"
    if not where:
        return "the request body must be a JSON object"
    if kind == "extra_forbidden":
        return f"unknown field {quoted(where)}; fields: {', '.join(model.model_fields)}"
    if kind == "missing":
        return f"field {quoted(where)} is required"
    return f"field {quoted(where)}: {first['msg'][0].lower()}{first['msg'][1:]}"


def parse_multipart(body: bytes, content_type: str) -> dict[str, bytes]:
    """The fields of a multipart/form-data body (name -> bytes), parsed in memory; 422 when the
    body is not one."""
    _, options = parse_options_header(content_type)
    boundary = options.get(b"boundary")
    if not boundary:
        raise invalid("the multipart body has no boundary in its Content-Type")
    form = _Form()
    parser = MultipartParser(boundary, form.callbacks())
    try:
        parser.write(body)
        parser.finalize()
    except MultipartParseError as error:
        raise invalid(f"the multipart body is malformed ({error})") from None
    if form.too_many:
        raise invalid(f"the multipart body has more than {MAX_PARTS} parts")
    return form.fields


class _Form:
    """Collects the parts of a multipart body: each part's name and its bytes."""

    def __init__(self):
        self.fields: dict[str, bytes] = {}
        self.too_many = False
        self._header, self._value, self._name = b"", b"", ""
        self._data: list[bytes] = []

    def callbacks(self) -> MultipartCallbacks:
        return {"on_part_begin": self._begin, "on_part_data": self._part_data,
                "on_part_end": self._end, "on_header_field": self._header_field,
                "on_header_value": self._header_value, "on_header_end": self._header_end}

    def _begin(self) -> None:
        self._name, self._data = "", []

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._header += data[start:end]

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def _header_end(self) -> None:
        if self._header.lower() == b"content-disposition":
            _, options = parse_options_header(self._value)
            self._name = options.get(b"name", b"").decode("utf-8", "replace")
        self._header, self._value = b"", b""

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        self._data.append(data[start:end])

    def _end(self) -> None:
        if len(self.fields) >= MAX_PARTS:
            self.too_many = True
        elif self._name:
            self.fields[self._name] = b"".join(self._data)
