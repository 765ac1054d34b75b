"""A trained run, loaded for use: the one object of a task that every front-end adapts (the
command line, the explorer, notebooks, `attnlab compare`, `attnlab.load`).

    run = TranslationRun.load("runs/bahdanau")        # a task's Run (translation/run.py)
    run.translate(["Ein Mann ."], beam=5)[0].text      # its verbs
    run.evaluate(src="test.de", ref="test.en").format()

Each task's Run subclasses `Run`: it says its task, what it is in a sentence ("a translation
model"), its verbs (how to call each), and implements `load`, and `evaluate` / `plot` where the
task has them. A front-end asks the Run, never the task's modules.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self

import torch
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
    reports: ClassVar[bool] = False      # it has .report(output, ...): an HTML page
    reads: ClassVar[bool] = False        # it has .read(sentence): an LSTMN's reading
    explains: ClassVar[bool] = False     # it has .explain(sentence): attention and attributions
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

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer (JSON-ready) to a request of its task's explorer endpoint, the fields
        other than "run"; a UserError says what was wrong with it. The shipped tasks' endpoints
        have forms of their own and call their verbs (translate, caption, read)."""
        raise UserError(f"this is {self.kind}, which answers no request of its own")

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
