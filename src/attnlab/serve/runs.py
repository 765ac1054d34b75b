"""The runs a server answers for, each loaded once at start: its task, a short description of its
attention mechanism, its config, and the loaded model with its vocabularies."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from attnlab.captioning import TrainedCaptioner, load_trained
from attnlab.config import config_to_dict
from attnlab.errors import CheckpointError, ConfigError
from attnlab.lm import TrainedLanguageModel, load_language_model
from attnlab.train import run_task
from attnlab.translation import TrainedRun, load_run

Task = Literal["translation", "captioning", "lm"]
# The task a checkpoint records -> the name the API uses, and the endpoint that serves it.
TASKS: dict[str, Task] = {"translation": "translation", "captioning": "captioning",
                          "language_model": "lm"}
ENDPOINTS: dict[Task, str] = {"translation": "/api/translate", "captioning": "/api/caption",
                              "lm": "/api/read"}
LOADERS = {"translation": load_run, "captioning": load_trained, "lm": load_language_model}


@dataclass
class ServedRun:
    """One loaded run: name (as the API knows it), task, mechanism (e.g. "bahdanau / additive"),
    config (the run's config.json as plain data) and loaded (the recipe's trained run)."""

    name: str
    task: Task
    mechanism: str
    config: dict[str, Any]
    loaded: TrainedRun | TrainedCaptioner | TrainedLanguageModel
    quantized: str | None = None  # "int8" when the model runs quantized

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "task": self.task, "mechanism": self.mechanism,
                "config": self.config, "quantized": self.quantized}

    @property
    def source_limit(self) -> int | None:
        """The most pieces a text may have for this model, or None when any length can be read:
        a `location` score addresses positions only up to its max_len (EOS included)."""
        model = self.config["model"]
        if "location" not in _scores(model):
            return None
        explicit = model.get("decoder", {}).get("attention", {}).get("max_len")
        return explicit - 1 if explicit else int(self.config["data"]["max_len"])


def load_runs(runs: Mapping[str, str | os.PathLike], *,
              quantize: str | None = None) -> dict[str, ServedRun]:
    """Load every run (name -> directory); a CheckpointError naming the directory when one is
    not a trained run of a task the server knows. quantize="int8" runs the translation models
    in int8 (see attnlab.models.quantize); the other tasks stay fp32."""
    if not runs:
        raise ConfigError("give at least one run to serve (--run DIR)")
    return {name: load_served(name, directory, quantize=quantize)
            for name, directory in runs.items()}


def load_served(name: str, directory: str | os.PathLike, *,
                quantize: str | None = None) -> ServedRun:
    recorded = run_task(directory)
    if recorded not in TASKS:
        raise CheckpointError(f"run directory {directory} holds a {recorded!r} model; the "
                              f"server reads translation, captioning and language-model runs")
    task = TASKS[recorded]
    loaded = LOADERS[task](directory)
    loaded.model.eval()
    quantized = quantize if task == "translation" else None
    if quantized:
        loaded = loaded.quantized(quantized)
    config = config_to_dict(loaded.config)
    return ServedRun(name, task, describe(task, config["model"]), config, loaded, quantized)


def describe(task: Task, model: dict[str, Any]) -> str:
    """A short name for a model config's attention, e.g. "luong / general, local-p (D=10)"."""
    if task == "captioning":
        return "hard attention" if model["decoder"]["attention"]["hard"] else "soft attention"
    if task == "lm":
        return f"lstmn / {model['score']}" if model["kind"] == "lstmn" else "lstm (no attention)"
    decoder, encoder = model["decoder"], model["encoder"]
    if decoder["kind"] == "none":
        text = "none (no attention)"
    else:
        text = f"{decoder['kind']} / {_attention(decoder['attention'])}"
    if encoder["kind"] == "lstmn":
        text += f"; lstmn encoder / {encoder['score']}"
    return text


def _attention(attention: dict[str, Any]) -> str:
    """"general", "general, local-p (D=10)", "additive, hard"."""
    text = attention["score"]
    if attention["hard"]:
        return f"{text}, hard"
    if attention["window"] is not None:
        kind = "local-p" if attention["predictive"] else "local-m"
        text += f", {kind} (D={attention['window']})"
    return text


def _scores(model: dict[str, Any]) -> set[str]:
    """Every score a model config uses: its decoder's attention, its LSTMN (encoder or reader)."""
    readers = (model, model.get("encoder", {}))
    found = {reader["score"] for reader in readers if reader.get("kind") == "lstmn"}
    attention = model.get("decoder", {}).get("attention")
    if attention is not None:
        found.add(attention["score"])
    return found
