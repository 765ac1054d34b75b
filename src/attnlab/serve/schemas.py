"""The JSON API's shapes: requests (strict: unknown fields and wrong types are refused) and
responses, each field described for the OpenAPI page at /docs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


class StrictRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An integer field, strict but for 16.0: JSON Schema's "integer" includes it (and clients that
# hold every number as a float send it), while "16" and 2.5 stay refused.
Whole = Annotated[int, BeforeValidator(_whole)]


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


class ErrorResponse(BaseModel):
    detail: str = Field(description="what was wrong, in one sentence")
