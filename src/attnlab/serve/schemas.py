"""The JSON API's own shapes (each task's request and answer are its Run's: request,
response), each field described for the OpenAPI page at /docs."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from attnlab.explain.attribution import STEPS
from attnlab.train.trained import Request, Whole

# An attribution of attnlab.explain, in its METHODS' order (tests/serve hold them equal)
Method = Literal["gradient", "integrated_gradients", "erasure"]


class ExplainRequest(Request):
    run: str = Field(description="a translation run's name, as GET /api/runs lists it")
    text: str = Field(description="the source sentence; not blank, at most max_tokens source "
                      "pieces")
    target: str | None = Field(
        None, description="the output to explain, e.g. a hypothesis' text from "
        "/api/translate (forced: the model is made to write it); default: the run's own "
        "translation with its decode settings (beam at most max_beam)")
    methods: list[Method] = Field(
        default_factory=lambda: list(get_args(Method)),
        description="the attributions to compute, any of gradient, integrated_gradients, "
        "erasure (default all three; [] gives the attention alone)")
    steps: Whole = Field(STEPS, description="integrated gradients' points, 1 to "
                         "max_explain_steps")


class RunInfo(BaseModel):
    name: str = Field(description="the name requests use")
    task: str = Field(description="its task, a key of attnlab.recipes.RECIPES: translation, "
                      "captioning, lm")
    endpoint: str = Field(description="the route that answers its requests, e.g. "
                          "/api/translate; the explorer's tabs list the runs of their route")
    mechanism: str = Field(description='the attention, e.g. "bahdanau / additive" or '
                           '"luong / general, local-p (D=10)"')
    config: dict[str, Any] = Field(description="the run's config.json")
    quantized: Literal["int8"] | None = Field(
        None, description="int8 when the server runs this model quantized (serve --quantize)")
    explains: list[Method] = Field(
        default_factory=list, description="the attributions POST /api/explain computes for "
        "this run: none for a run whose task has no explain; erasure only for an int8 run "
        "(no gradients)")
    example: str = Field("", description="a text the explorer opens with (a translation run's "
                         "first validation source), empty when the run offers none")
    about: str = Field("", description="the model and what it was trained on in a line, e.g. "
                       '"bahdanau / additive, global; trained on dates of 1000-2099 (50% of '
                       'them 1950-2049) and 5% not dates"; empty when the run says nothing more')
    heads: list[int] | None = Field(
        None, description="[layers, heads] of its cross-attention when it has them (a "
        "Transformer's): POST /api/translate with heads: true then returns every layer and "
        "head's weights; null for a model whose attention has no layers and heads")


class ExplainResponse(BaseModel):
    source: str = Field(description="the source sentence")
    text: str = Field(description="the output explained")
    source_pieces: list[str] = Field(description='the model\'s source pieces, "</s>" last: '
                                     "the columns of every view")
    target_pieces: list[str] = Field(description='the output\'s pieces, "</s>" last: the rows '
                                     "of every view")
    log_probs: list[float | None] = Field(description="log p of each output piece given the "
                                          "ones before it and the source")
    integrated_gradients_steps: int = Field(description="integrated gradients' points (those "
                                            "it ended with, when they were computed)")
    integrated_gradients_gap: float | None = Field(
        None, description="their completeness gap: the worst row's |sum of the row - (log p - "
        "log p at the baseline)|, in nats; null when they were not computed")
    integrated_gradients_tolerance: float | None = Field(
        None, description="the gap they were asked to meet (null: a fixed rule of points)")
    integrated_gradients_capped: bool = Field(
        False, description="they stopped at the most points short of the tolerance")
    integrated_gradients_stepped: bool = Field(
        False, description="log p steps along their path (local-p's window moving, hard "
        "attention's argmax), where no rule meets the tolerance: the gap holds the steps")
    baseline: str = Field(description="what the attributions start from")
    views: dict[str, list[list[float | None]]] = Field(
        description="rows x columns each: attention (absent for a model without it; rows sum "
        "to 1) and each attribution asked for, signed (its relevance to log p of the row's "
        "piece); null where a diverged model gave no finite number")


class ErrorResponse(BaseModel):
    detail: str = Field(description="what was wrong, in one sentence")
