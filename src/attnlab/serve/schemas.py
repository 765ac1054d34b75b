"""The JSON API's shapes: requests (strict: unknown fields and wrong types are refused) and
responses, each field described for the OpenAPI page at /docs."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from attnlab.explain.attribution import STEPS


class StrictRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An integer field, strict but for 16.0: JSON Schema's "integer" includes it (and clients that
# hold every number as a float send it), while "16" and 2.5 stay refused.
Whole = Annotated[int, BeforeValidator(_whole)]
# An attribution of attnlab.explain, in its METHODS' order (tests/serve hold them equal)
Method = Literal["gradient", "integrated_gradients", "erasure"]


class TranslateRequest(StrictRequest):
    run: str = Field(description="a translation run's name, as GET /api/runs lists it")
    text: str = Field(description="the sentence to translate; not blank, at most max_tokens "
                      "source pieces")
    beam: Whole | None = Field(None, description="beam size, 1 (greedy) to max_beam; default: "
                             "the run's decode.beam, raised to nbest")
    nbest: Whole = Field(1, description="how many hypotheses to return, best first; at most beam")
    level: Literal["word", "piece"] = Field(
        "word", description="label attention by words (pieces of a word merged: source "
        "columns summed, target rows averaged) or by the model's own pieces")


class CaptionExampleRequest(StrictRequest):
    run: str = Field(description="a captioning run's name")
    example: Whole = Field(description="which image of the run's test split to caption (0-based)")


class ReadRequest(StrictRequest):
    run: str = Field(description="a language-model run's name (an LSTMN)")
    text: str = Field(description="the sentence to read; not blank, at most max_tokens pieces")


class ExplainRequest(StrictRequest):
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


class RunRequest(BaseModel):
    """The request of a task's endpoint that the explorer has no form of its own for: the
    run's name, and the fields its Run's answer reads."""

    model_config = ConfigDict(extra="allow")
    run: str = Field(description="the run's name, as GET /api/runs lists it")


class RunInfo(BaseModel):
    name: str = Field(description="the name requests use")
    task: str = Field(description="its task, a key of attnlab.recipes.RECIPES: translation, "
                      "captioning, lm")
    mechanism: str = Field(description='the attention, e.g. "bahdanau / additive" or '
                           '"luong / general, local-p (D=10)"')
    config: dict[str, Any] = Field(description="the run's config.json")
    quantized: Literal["int8"] | None = Field(
        None, description="int8 when the server runs this model quantized (serve --quantize)")
    explains: list[Method] = Field(
        default_factory=list, description="the attributions POST /api/explain computes for "
        "this run: none for a run whose task has no explain; erasure only for an int8 run "
        "(no gradients)")
    about: str = Field("", description="the model and what it was trained on in a line, e.g. "
                       '"bahdanau / additive, global; trained on dates of 1000-2099 (50% of '
                       'them 1950-2049) and 5% not dates"; empty when the run says nothing more')


class Hypothesis(BaseModel):
    text: str = Field(description="the translation")
    score: float = Field(description="log-probability divided by the GNMT length penalty; "
                         "hypotheses are sorted by it, best first")
    tokens: list[str] = Field(description='target words or pieces; "</s>" last when the '
                              "hypothesis finished")
    source_tokens: list[str] = Field(description='source words or pieces, "</s>" last')
    attention: list[list[float]] | None = Field(
        description="one row per target token, one column per source token: the weights that "
        "produced the token (each row sums to 1); null for a model without attention")


class TranslateResponse(BaseModel):
    hypotheses: list[Hypothesis] = Field(description="the n-best list, best first")


class CaptionResponse(BaseModel):
    caption: str
    tokens: list[str] = Field(description="the caption's words (no end token)")
    attention: list[list[float]] = Field(description="one row per word, grid[0] * grid[1] "
                                         "values in row-major order: where the word looked")
    grid: list[int] = Field(description="[H, W] of the annotation grid")
    image: str = Field(description="the square image the model saw, as a PNG data URL")


class ReadResponse(BaseModel):
    tokens: list[str] = Field(description='"<s>" then the sentence\'s pieces, in reading order')
    weights: list[list[float]] = Field(description="step x step, the last layer: row t holds "
                                       "step t's attention over the positions i < t")


class ExplainResponse(BaseModel):
    source: str = Field(description="the source sentence")
    text: str = Field(description="the output explained")
    source_pieces: list[str] = Field(description='the model\'s source pieces, "</s>" last: '
                                     "the columns of every view")
    target_pieces: list[str] = Field(description='the output\'s pieces, "</s>" last: the rows '
                                     "of every view")
    log_probs: list[float | None] = Field(description="log p of each output piece given the "
                                          "ones before it and the source")
    integrated_gradients_steps: int = Field(description="integrated gradients' points")
    baseline: str = Field(description="what the attributions start from")
    views: dict[str, list[list[float | None]]] = Field(
        description="rows x columns each: attention (absent for a model without it; rows sum "
        "to 1) and each attribution asked for, signed (its relevance to log p of the row's "
        "piece); null where a diverged model gave no finite number")


class ErrorResponse(BaseModel):
    detail: str = Field(description="what was wrong, in one sentence")
