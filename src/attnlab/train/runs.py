"""One run layer for every task: find a trained run's checkpoint (best, else last), check that it
is the task's, read its config, load weights onto a device.

    run = open_run("runs/x", RunConfig, task="translation")     # config, checkpoint, meta
    model = load_weights(run, build_model(run.config.model, ...), device="auto")

A recipe (translation, captioning, lm) adds its vocabularies and model builder on top.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import torch
from torch import nn

from attnlab.config import config_from_dict, config_to_dict
from attnlab.errors import CheckpointError, ConfigError

from .checkpoint import CHECKPOINTS, RunDir

C = TypeVar("C")
SEARCHED = 1000  # folders looked into for the runs a folder that is not one holds
T = TypeVar("T")


def choose_checkpoint(run_dir: RunDir, name: str | None) -> str:
    """`name`, or "best" when the run has one and else "last"; CheckpointError (one sentence,
    see not_a_run) when the directory is not a run or holds no checkpoint yet."""
    found = [candidate for candidate in CHECKPOINTS if run_dir.has_checkpoint(candidate)]
    if not found:
        raise CheckpointError(not_a_run(run_dir.path))
    if name is None:
        return found[0]
    if name not in found:
        raise CheckpointError(f"run directory {run_dir.path} has no {name!r} checkpoint, only "
                              f"{' and '.join(repr(f) for f in found)}")
    return name


def not_a_run(path: Path) -> str:
    """Why `path`, which has no checkpoint, is not a trained run, naming what to pass instead:
    it does not exist, is a file, is a run's checkpoint folder, holds runs (named), has started
    training, is empty, or is some other folder."""
    wrote = "pass a folder that attnlab train or attnlab export wrote"
    if not path.exists():
        return f"run directory {path} does not exist"
    if not path.is_dir():
        return f"{path} is a file, not a run directory; {wrote}"
    if path.name in CHECKPOINTS and RunDir(path.parent).has_checkpoint(path.name):
        return (f"{path} is the {path.name}/ checkpoint of a run, not a run directory: did you "
                f"mean {path.parent}?")
    inside, complete = runs_inside(path)
    if inside:
        return f"{path} is not a run directory but holds {_some_runs(inside, complete)}"
    if (path / "config.json").is_file():
        return f"run directory {path} has no checkpoint (best/ or last/) yet; train it first"
    if not any(path.iterdir()):
        return (f"run directory {path} is empty: it has no checkpoint (best/ or last/) yet; "
                f"train a run into it, or {wrote}")
    holds = "holds no run" if complete else f"no run in its first {SEARCHED:,} folders"
    return (f"{path} has no checkpoint (best/ or last/) and {holds}, so it is not a run "
            f"directory; {wrote}")


def _some_runs(runs: list[Path], complete: bool) -> str:
    """'one run: did you mean a?', '3 runs: did you mean a, b or c?', 'at least 9 runs, such
    as a, b, c: pass one of them' (at least: the search stopped before the end)."""
    count = ("" if complete else "at least ") + ("one run" if len(runs) == 1
                                                 else f"{len(runs):,} runs")
    if len(runs) == 1:
        return f"{count}: did you mean {runs[0]}?"
    if len(runs) <= 4:
        return f"{count}: did you mean {', '.join(map(str, runs[:-1]))} or {runs[-1]}?"
    return f"{count}, such as {', '.join(map(str, runs[:3]))}: pass one of them"


def runs_inside(folder: Path, budget: int | None = None) -> tuple[list[Path], bool]:
    """The runs (folders with a checkpoint) anywhere under `folder` (runs/SUITE/MEMBER/seed-N),
    in path order, and whether the search was complete: it looks into at most `budget`
    folders (None: SEARCHED), never into a run, a hidden folder or a symbolic link."""
    budget = SEARCHED if budget is None else budget
    found: list[Path] = []
    waiting = deque([folder])
    while waiting:
        if budget == 0:
            return sorted(found), False
        budget -= 1
        try:
            children = sorted(child for child in waiting.popleft().iterdir()
                              if not child.name.startswith(".") and child.is_dir()
                              and not child.is_symlink())
        except OSError:  # unreadable: nothing to suggest there
            continue
        for child in children:
            if any(RunDir(child).has_checkpoint(name) for name in CHECKPOINTS):
                found.append(child)
            else:
                waiting.append(child)
    return sorted(found), True


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
