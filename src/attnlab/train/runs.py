"""One run layer for every task: find a trained run's checkpoint (best, else last), check that it
is the task's, read its config, load weights onto a device.

    run = open_run("runs/x", RunConfig, task="translation")     # config, checkpoint, meta
    model = load_weights(run, build_model(run.config.model, ...), device="auto")

A recipe (translation, captioning, lm) adds its vocabularies and model builder on top.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

import torch
from torch import nn

from attnlab.config import config_from_dict, config_to_dict
from attnlab.errors import CheckpointError, ConfigError

from .checkpoint import CHECKPOINTS, RunDir

C = TypeVar("C")
T = TypeVar("T")


def choose_checkpoint(run_dir: RunDir, name: str | None) -> str:
    """`name`, or "best" when the run has one and else "last"; CheckpointError (one sentence)
    when the directory is not a run or holds no checkpoint yet."""
    if not run_dir.path.is_dir():
        raise CheckpointError(f"run directory {run_dir.path} does not exist")
    found = [candidate for candidate in CHECKPOINTS if run_dir.has_checkpoint(candidate)]
    if not found:
        raise CheckpointError(f"run directory {run_dir.path} has no checkpoint (best/ or last/) "
                              f"yet; train it first")
    if name is None:
        return found[0]
    if name not in found:
        raise CheckpointError(f"run directory {run_dir.path} has no {name!r} checkpoint, only "
                              f"{' and '.join(repr(f) for f in found)}")
    return name


def pick_device(name: str | torch.device = "auto") -> torch.device:
    """"auto" is the first CUDA device when there is one, else the CPU; other names as torch."""
    if isinstance(name, torch.device):
        return name
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ConfigError(f"unknown device {name!r}; use auto, cpu, cuda or cuda:N") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r} was asked for but this machine has no CUDA device")
    return device


def perplexity(loss: float) -> float:
    """exp(per-token NLL), capped so that an untrained model does not overflow."""
    return math.exp(min(loss, 50.0))


def model_signature(task: str, model_config, **sizes) -> dict:
    """What a checkpoint must have been trained as to load into a model: the task, the model
    config as plain data, and the sizes that shape it (vocabularies, image size...)."""
    return {"task": task, "model": config_to_dict(model_config), **sizes}


@dataclass
class OpenedRun(Generic[C]):
    """A run directory with its checkpoint chosen: config (the recipe's dataclass), checkpoint
    ("best" or "last"), meta (that checkpoint's meta.json: step, metrics, signature)."""

    directory: RunDir
    config: C
    checkpoint: str
    meta: dict

    @property
    def path(self):
        return self.directory.path


def run_task(directory: str | os.PathLike, checkpoint: str | None = None) -> str | None:
    """The task a run was trained for (a key of attnlab.recipes.RECIPES: "translation",
    "captioning", "lm"), as its checkpoint's meta.json records it; None when it records none."""
    run_dir = RunDir(directory)
    meta = run_dir.read_meta(choose_checkpoint(run_dir, checkpoint))
    return meta.get("signature", {}).get("task")


def open_run(directory: str | os.PathLike, config_cls: type[C], checkpoint: str | None = None,
             *, task: str) -> OpenedRun[C]:
    """Choose the checkpoint, check the run is a `task` run (before its config is parsed, so a
    captioning run given to translate says so), and read its config."""
    run_dir = RunDir(directory)
    name = choose_checkpoint(run_dir, checkpoint)
    meta = run_dir.read_meta(name)
    found = meta.get("signature", {}).get("task")
    if found is not None and found != task:
        raise CheckpointError(f"{run_dir.path} is a {found} run, not a {task} run")
    config_file = run_dir.file("config.json")
    config = config_from_dict(run_dir.read_config(), config_cls, origin=str(config_file))
    return OpenedRun(run_dir, config, name, meta)


def load_weights(run: OpenedRun, model: nn.Module, signature: dict | None = None,
                 device: str | torch.device = "cpu") -> nn.Module:
    """The run's weights in `model` (CheckpointError if it was trained as another model), on
    `device`, in eval mode."""
    run.directory.load_checkpoint(run.checkpoint, model, signature)
    return model.to(pick_device(device)).eval()


def listed(items: Iterable[T], verb: str, what: str,
           single: tuple[type, ...] = (str, bytes, os.PathLike)) -> list[T]:
    """`items` as a list; a lone string (or other `single` item) is refused in one sentence,
    since it is not a list of them: "translate takes a list of lines; for one, pass [line]"."""
    if isinstance(items, single):
        raise TypeError(f"{verb} takes a list of {what}; for one, pass [{what[:-1]}]")
    return list(items)
