"""The attention explorer's web app: the page at / (static/), the JSON API under /api, its
OpenAPI page at /docs. Every error is {"detail": "<one sentence>"}; one log line per request.
Only requests naming an allowed host are answered (hosts.py), and the API reads only JSON (and
multipart uploads), which a page on another site cannot send without the browser asking first.

    app = create_app({"dates": "runs/dates", "shapes": "runs/shapes-soft"})
    uvicorn.run(app, host="127.0.0.1", port=8000)
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from attnlab.recipes import RECIPES, Recipe

from .bodies import JSON, MULTIPART, read_body, require_media_type
from .hosts import HostCheck, allowed_names
from .limits import Limits
from .problems import RequestError
from .runs import load_runs
from .schemas import ErrorResponse, ExplainRequest, ExplainResponse, RunInfo
from .service import Service

STATIC_DIR = Path(__file__).parent / "static"
# Swagger UI for /docs, as the fastapi-offline package ships it (swagger-ui-dist 5.x, its
# static/ folder), served under the URL the page has always used.
SWAGGER_DIR = Path(fastapi_offline.__file__).parent / "static"
SWAGGER_URL = "/static/vendor/swagger-ui"
logger = logging.getLogger("attnlab.serve")
# Every status an endpoint answers with (the OpenAPI schema is held to it by
# tests/serve/test_schema.py); 500 is a bug, never documented.
STATUSES = {
    400: "the Host header names none of the hosts this server answers to",
    404: "an unknown run",
    413: "past a limit: the request body, the text's pieces, the image's pixels, an "
         "explanation's time",
    415: "a body that is not application/json (or multipart/form-data, where allowed)",
    422: "invalid input: a wrong type, an unknown field, a value out of range, a run of "
         "another task",
    503: "the queue is full; Retry-After says when to try again",
}


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorResponse, "description": STATUSES[status]}
            for status in statuses}


WORK_ERRORS = _errors(400, 404, 413, 415, 422, 503)


def create_app(runs: Mapping[str, str | os.PathLike], limits: Limits | None = None, *,
               quantize: str | None = None, allowed_hosts: Iterable[str] = (),
               device: str = "cpu") -> FastAPI:
    """Load every run (name -> run directory) once, on `device` (auto, cpu, cuda, cuda:N), and
    the app that serves them; quantize "int8" runs the translation models in int8. The app
    answers requests whose Host is a loopback name or one of `allowed_hosts` (names or
    addresses, any port), others get 400."""
    names = allowed_names("localhost", allowed_hosts)
    service = Service(load_runs(runs, quantize=quantize, device=device), limits or Limits())

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        yield
        service.batcher.close()

    # docs_url=None: FastAPI's own /docs loads Swagger UI from a CDN; ours serves the copy the
    # fastapi-offline package installs, so the documentation works offline.
    app = FastAPI(title="attnlab serve", lifespan=lifespan, docs_url=None,
                  description="The attention explorer: translate, caption and read with trained "
                  "runs and see where each output token looked.")
    app.state.service = service
    app.add_middleware(HostCheck, names=names)
    app.add_middleware(RequestLog)  # the outermost: refused hosts are logged too
    _add_error_handlers(app)
    _add_routes(app, service)
    # Before /static: the more specific mount must match first.
    app.mount(SWAGGER_URL, StaticFiles(directory=SWAGGER_DIR), name="swagger-ui")
    app.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")
    return app


def _body_schema(json: dict, form: dict | None = None) -> dict:
    """openapi_extra documenting a body the endpoint reads itself (under the size cap)."""
    content = {"application/json": {"schema": json}}
    if form is not None:
        content["multipart/form-data"] = {"schema": form}
    return {"requestBody": {"required": True, "content": content}}


def _request_schema(model: type[BaseModel], runs: list[str], service: Service) -> dict:
    """The model's JSON schema with what this server knows: the names of the `runs` it takes
    and its limits, so that the page at /docs offers them and a fuzzer tries them."""
    schema = model.model_json_schema()
    fields = schema["properties"]
    fields["run"].update({"enum": runs} if runs else {})
    if "text" in fields:
        fields["text"]["minLength"] = 1
    beam = {"minimum": 1, "maximum": service.limits.max_beam}
    if "beam" in fields:
        fields["beam"]["anyOf"][0].update(beam)
        fields["nbest"].update(beam)
    if "example" in fields:
        fields["example"]["minimum"] = 0
    if "steps" in fields:
        fields["steps"].update({"minimum": 1, "maximum": service.limits.max_explain_steps})
    return schema


def _upload_schema(recipe: Recipe, runs: list[str]) -> dict:
    run = {"type": "string", "description": f"a {recipe.title} run's name",
           **({"enum": runs} if runs else {})}
    image = {"type": "string", "format": "binary",
             "description": "a PNG/JPEG/... image, at most max_upload_bytes and max_pixels"}
    return {"type": "object", "required": ["run", "image"],
            "properties": {"run": run, "image": image}}


def _add_routes(app: FastAPI, service: Service) -> None:
    cap = service.limits.max_upload_bytes

    @app.get("/", include_in_schema=False)
    async def page():
        index = STATIC_DIR / "index.html"
        if not index.is_file():
            raise RequestError(404, "the explorer page is not installed (serve/static/index.html)")
        return FileResponse(index)

    @app.get("/docs", include_in_schema=False)
    async def docs():
        return get_swagger_ui_html(openapi_url="/openapi.json", title="attnlab serve: API",
                                   swagger_js_url=f"{SWAGGER_URL}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{SWAGGER_URL}/swagger-ui.css",
                                   swagger_favicon_url=f"{SWAGGER_URL}/favicon.png")

    @app.get("/api/runs", response_model=list[RunInfo], responses=_errors(400),
             summary="the runs this server answers for")
    async def list_runs():
        return JSONResponse([run.info() for run in service.runs.values()])

    @app.post("/api/explain", response_model=ExplainResponse, responses=WORK_ERRORS,
              summary="attention beside gradient x input, integrated gradients and erasure of "
              "one translation (each costs a few to a few dozen translations)",
              openapi_extra=_body_schema(_request_schema(
                  ExplainRequest, [name for name, run in service.runs.items() if run.explains],
                  service)))
    async def explain(request: Request):
        require_media_type(request, JSON)
        return JSONResponse(await service.explain(await read_body(request, cap)))

    for recipe in RECIPES.values():  # each task's endpoint, as its record names it
        _add_run_route(app, service, recipe)


def _add_run_route(app: FastAPI, service: Service, recipe: Recipe) -> None:
    """POST recipe.endpoint: a request its Run declares (JSON, or an image upload where the
    Run takes one), answered by the Run."""
    cap = service.limits.max_upload_bytes
    run_class = recipe.run_class
    runs = [name for name, run in service.runs.items() if isinstance(run.loaded, run_class)]
    media = (JSON, MULTIPART) if run_class.uploads else (JSON,)
    form = _upload_schema(recipe, runs) if run_class.uploads else None
    summary = (run_class.request.__doc__ or recipe.purpose).strip().splitlines()[0]

    @app.post(recipe.endpoint, response_model=run_class.response, responses=WORK_ERRORS,
              summary=summary[0].lower() + summary[1:].rstrip("."),
              openapi_extra=_body_schema(_request_schema(run_class.request, runs, service),
                                         form))
    async def answer(request: Request):
        require_media_type(request, *media)
        body = await read_body(request, cap)
        return JSONResponse(await service.answer(recipe, body,
                                                 request.headers.get("content-type", "")))


def _add_error_handlers(app: FastAPI) -> None:
    """Every error as {"detail": "<one sentence>"}, never FastAPI's list of errors."""

    @app.exception_handler(RequestError)
    async def refused(_: Request, error: RequestError):
        return JSONResponse({"detail": error.message}, error.status, headers=error.headers)

    @app.exception_handler(RequestValidationError)
    async def malformed(_: Request, error: RequestValidationError):
        first = error.errors()[0] if error.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(part) for part in first["loc"])
        return JSONResponse({"detail": f"{where}: {first['msg']}" if where else first["msg"]},
                            422)

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, error: HTTPException):
        return JSONResponse({"detail": str(error.detail)}, error.status_code,
                            headers=getattr(error, "headers", None))

    @app.exception_handler(Exception)
    async def bug(request: Request, error: Exception):
        logger.exception("%s %s failed", request.method, request.url.path)
        return JSONResponse({"detail": f"internal error ({type(error).__name__}); see the "
                             f"server log"}, 500)


class RequestLog:
    """ASGI middleware: one line per HTTP request on logger attnlab.serve: method, path, status
    and milliseconds."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.perf_counter(), 500

        async def sending(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            logger.info("%s %s %d %.1f ms", scope["method"], scope["path"], status,
                        (time.perf_counter() - started) * 1000)
