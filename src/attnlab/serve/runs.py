"""The runs a server answers for, each loaded once at start through its task's record
(attnlab.recipes): its task, its recipe's few words for its attention, its config, and the loaded
model with its vocabularies."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from attnlab.config import config_to_dict
from attnlab.errors import ConfigError
from attnlab.explain.attribution import METHODS
from attnlab.recipes import recipe_of_run
from attnlab.train.capabilities import Explains

GRADIENT_FREE = "erasure"  # the one attribution that needs no gradient


@runtime_checkable
class HasHeads(Protocol):
    """A Run that can say whether its attention has layers and heads (a Transformer's)."""

    @property
    def head_shape(self) -> tuple[int, int] | None: ...


@dataclass
class ServedRun:
    """One loaded run: name (as the API knows it), task, mechanism (its recipe's describe, e.g.
    "bahdanau / additive, global"),
    config (the run's config.json as plain data) and loaded (the recipe's trained run)."""

    name: str
    task: str  # a key of attnlab.recipes.RECIPES
    endpoint: str  # the route that answers its requests (its recipe's endpoint)
    mechanism: str
    config: dict[str, Any]
    loaded: Any  # the recipe's Run (TranslationRun, CaptioningRun, ...): its verbs vary by task
    quantized: str | None = None  # "int8" when the model runs quantized
    about: str = ""  # the Run's description: what it is and what it was trained on
    example: str = ""  # a text to open the explorer with, when its Run offers one
    heads: list[int] | None = None  # [layers, heads] of its cross-attention, if it has them

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "task": self.task,
                "endpoint": self.endpoint, "mechanism": self.mechanism,
                "config": self.config, "quantized": self.quantized, "explains": self.explains,
                "about": self.about, "example": self.example, "heads": self.heads}

    @property
    def explains(self) -> list[str]:
        """The attributions its Run's explain can compute here: none when its task has no
        explain, erasure alone in int8 (a quantized layer has no gradient), else all."""
        if not isinstance(self.loaded, Explains):
            return []
        return [GRADIENT_FREE] if self.quantized else list(METHODS)

    @property
    def source_limit(self) -> int | None:
        """The most pieces a text may have for this model, or None when any length can be read
        (its model's max_source_length counts the EOS, or the language model's BOS, too)."""
        limit = self.loaded.model.max_source_length
        return None if limit is None else limit - 1


def load_runs(runs: Mapping[str, str | os.PathLike], *, quantize: str | None = None,
              device: str = "cpu") -> dict[str, ServedRun]:
    """Load every run (name -> directory) on `device` (auto, cpu, cuda, cuda:N); a
    CheckpointError naming the directory when one is not a trained run of a task the server
    knows. quantize="int8" runs the translation models in int8 (see attnlab.models.quantize),
    on the CPU (where device auto then puts them); the other tasks stay fp32."""
    if not runs:
        raise ConfigError("give at least one run to serve (--run DIR)")
    return {name: load_served(name, directory, quantize=quantize, device=device)
            for name, directory in runs.items()}


def load_served(name: str, directory: str | os.PathLike, *, quantize: str | None = None,
                device: str = "cpu") -> ServedRun:
    recipe = recipe_of_run(directory)
    quantized = quantize if recipe.quantizable else None
    loaded = recipe.load(directory, device="cpu" if quantized and device == "auto" else device)
    loaded.model.eval()
    if quantized:
        loaded = loaded.quantized(quantized)
    config = config_to_dict(loaded.config)
    shape = loaded.head_shape if isinstance(loaded, HasHeads) else None
    return ServedRun(name, recipe.name, recipe.endpoint, recipe.describe(loaded.config.model),
                     config, loaded, quantized, loaded.description,
                     getattr(loaded, "example", ""), None if shape is None else list(shape))
