"""A trained run, loaded for use: the one object of a task that every front-end adapts (the
command line, the explorer, notebooks, `attnlab compare`, `attnlab.load`).

    run = TranslationRun.load("runs/bahdanau")        # a task's Run (translation/run.py)
    run.translate(["Ein Mann ."], beam=5)[0].text      # its verbs
    run.evaluate(src="test.de", ref="test.en").format()

Each task's Run subclasses `Run`: it says its task, what it is in a sentence ("a translation
model"), its verbs (how to call each), and implements `load`, and `evaluate` / `plot` where the
task has them; its explorer endpoint is its `request` (a pydantic model) and its `answer`. A
front-end asks the Run, never the task's modules.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Protocol, Self

import torch
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from torch import nn

from attnlab.errors import UserError


class Evaluation(Protocol):
    """What `Run.evaluate` returns: the lines a command prints (format), the record --output
    writes (to_dict), the task's further files by option name (outputs: "hypotheses" -> a
    function making its text) and a line on how fast it ran (timing; None when not timed)."""

    def format(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...

    def outputs(self) -> dict[str, Callable[[], str | bytes]]: ...

    def timing(self) -> str | None: ...


class Request(BaseModel):
    """A request of a task's explorer endpoint: the run's name and the fields its Run's answer
    reads, each described for the API's page. Strict: unknown fields and wrong types are
    refused."""

    model_config = ConfigDict(extra="forbid", strict=True)
    run: str = Field(description="the run's name, as GET /api/runs lists it")


class OpenRequest(Request):
    """The run's answer to any JSON object naming it (its Run declares no fields and checks
    them itself)."""

    model_config = ConfigDict(extra="allow")


class Upload(Request):
    """A request made of an uploaded image (a form's `run` and `image`), for a Run whose
    endpoint takes one: the image opened (a PIL image, its header read), not yet decoded."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    image: Any


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An integer field, strict but for 16.0: JSON Schema's "integer" includes it (and clients that
# hold every number as a float send it), while "16" and 2.5 stay refused.
Whole = Annotated[int, BeforeValidator(_whole)]


def number(value: int) -> str:
    """An integer a request sent, inside a message: whole up to 12 digits, else how long it
    is (a request may send 10**4000)."""
    digits = str(abs(value))
    return str(value) if len(digits) <= 12 else f"a number of {len(digits)} digits"


@dataclass(repr=False)
class Run:
    """A run directory (or exported model) loaded on a device: path, checkpoint ("best" or
    "last"), meta (its meta.json: step, metrics, signature), config (the task's experiment
    config) and model (eval mode)."""

    task: ClassVar[str] = ""       # its key in attnlab.recipes.RECIPES
    kind: ClassVar[str] = ""       # "a translation model", for sentences about it
    verbs: ClassVar[dict[str, str]] = {}  # verb -> how to call it: ".caption(images)"
    # The keyword options its evaluate takes (the command line refuses others in a sentence).
    evaluate_options: ClassVar[tuple[str, ...]] = ()
    evaluate_outputs: ClassVar[tuple[str, ...]] = ()  # the Evaluation's further files
    plot_options: ClassVar[tuple[str, ...]] = ()      # the keyword options its plot takes
    plot_example: ClassVar[str] = "EXAMPLE"             # what plot draws, for a message
    quantizable: ClassVar[bool] = False  # .quantized("int8") applies
    ensembles: ClassVar[bool] = False    # load takes a list of runs (their ensemble)
    # (what only some Runs do, explain, read, report..., is a Protocol: train/capabilities.py)
    # Its explorer endpoint (the record's `endpoint`): the JSON body, the answer's shape (None:
    # undocumented), and whether it also takes an image upload (an Upload request).
    request: ClassVar[type[Request]] = OpenRequest
    response: ClassVar[type[BaseModel] | None] = None
    uploads: ClassVar[bool] = False
    _every_verb: ClassVar[set[str]] = set()

    path: Path
    checkpoint: str
    meta: dict[str, Any]
    config: Any
    model: nn.Module

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Run._every_verb.update(cls.verbs)

    @classmethod
    def load(cls, path: str | os.PathLike, checkpoint: str | None = None, *,
             device: str | torch.device = "cpu") -> Self:
        """The run at `path` (`checkpoint`: "best", "last", or None for best-else-last) with
        its model in eval mode on `device`."""
        raise NotImplementedError(f"{cls.__name__} does not define load")

    def evaluate(self, **options: Any) -> Evaluation:
        """Score the run on its task's test data; options by name (evaluate_options)."""
        raise UserError(f"this is {self.kind}, which attnlab cannot evaluate")

    def plot(self, example: str, output: str | os.PathLike, **options: Any) -> list[str]:
        """Draw the attention of `example` (a sentence, an image file...) into `output`; the
        lines to print (what was drawn and where)."""
        raise UserError(f"this is {self.kind}, which has no attention figure")

    @classmethod
    def plot_name(cls, example: str) -> str:
        """The figure's file name in the run's plots/ folder when no output is given."""
        return "attention.png"

    def answer(self, request: Any) -> dict[str, Any]:
        """The answer (JSON-ready) to one request of its explorer endpoint (a `request`, or an
        Upload); a UserError says what was wrong with it."""
        raise UserError(f"this is {self.kind}, which answers no request of its own")

    def settle(self, request: Any, limits: Mapping[str, float]) -> Any:
        """The request as it will be answered, its defaults resolved within a server's
        `limits` (max_beam, max_tokens...); a UserError refuses it before it waits for the
        model."""
        return request

    def batch_key(self, request: Any) -> Hashable:
        """Settled requests with equal keys may be answered together by answer_batch."""
        return ()

    def pieces(self, text: str) -> int:
        """How many pieces the model reads of a request's `text` (a server limits them)."""
        raise UserError(f"this is {self.kind}, which reads no text")

    def answer_batch(self, requests: Sequence[Any]) -> list[dict[str, Any] | UserError]:
        """The answers to requests of one batch_key, in order, or the UserError each earned;
        one at a time unless the task's verb batches."""
        answers: list[dict[str, Any] | UserError] = []
        for request in requests:
            try:
                answers.append(self.answer(request))
            except UserError as error:
                answers.append(error)
        return answers

    @property
    def description(self) -> str:
        """What the model is and what it was trained on, in a line (the explorer shows it
        under the run picker); "" when its task says nothing more than its name."""
        return ""

    def quantized(self, kind: str | None) -> Self:
        """This run with its model in `kind` ("int8"), or as it is for None."""
        if kind is None:
            return self
        raise UserError(f"this is {self.kind}, which attnlab does not quantize")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({str(self.path)!r}, checkpoint={self.checkpoint!r}, "
                f"step={self.meta.get('step', '?')})")

    if not TYPE_CHECKING:  # hidden from mypy, which would otherwise accept any attribute

        def __getattr__(self, name: str):
            """Only for a missing attribute: another task's verb (.caption on a translation
            model) says what this model is and which verbs it has."""
            if self.kind and name in Run._every_verb:
                ways = " or ".join(self.verbs.values())
                raise AttributeError(f"this is {self.kind}, which has no .{name}(): use {ways}")
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
