"""Checkpoint averaging: the weights of a run's last N step checkpoints, element by element
(as onmt_average_models and fairseq's average_checkpoints.py do; Vaswani et al. 2017, sec. 6.1,
average their last 5 or 20).

With `train.keep_checkpoints: N` every save of `last` also writes a weights-only copy,

    runs/x/checkpoints/step-00001200/   model.safetensors, meta.json

atomically (as every checkpoint is), and only the newest N stay. `average` writes a new run
directory whose `last` checkpoint holds their mean, with the run's config and its task's files,
so every command reads it like the run itself.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from attnlab.errors import CheckpointError, WriteError
from attnlab.files import describe, writing

from .checkpoint import RunDir, Weights

STEPS_DIR = "checkpoints"  # inside a run directory
_STEP = re.compile(r"step-(\d+)")


def step_checkpoints(run: RunDir) -> RunDir:
    """The folder of a run's step checkpoints, as a RunDir of its own."""
    return RunDir(run.path / STEPS_DIR)


def keep_step(run: RunDir, step: int, model: nn.Module, signature: dict, info: dict,
              keep: int) -> Path:
    """Save the weights as step checkpoint `step`, then remove all but the newest `keep`."""
    steps = step_checkpoints(run)
    path = steps.save_checkpoint(f"step-{step:08d}", model, signature, info=info)
    for _, old in kept_steps(run)[:-keep]:
        with writing(old, "remove"):
            # renamed first: a crash mid-removal leaves a name kept_steps does not list
            os.rename(old, old.with_name(old.name + ".old"))
            shutil.rmtree(old.with_name(old.name + ".old"))
    return path


def kept_steps(run: RunDir) -> list[tuple[int, Path]]:
    """(step, folder) of the run's complete step checkpoints, oldest first."""
    folder = run.path / STEPS_DIR
    if not folder.is_dir():
        return []
    found = [(int(match[1]), child) for child in folder.iterdir()
             if (match := _STEP.fullmatch(child.name)) and (child / "meta.json").is_file()]
    return sorted(found)


def average_weights(checkpoints: Sequence[Weights]) -> Weights:
    """The element-wise mean of the checkpoints' floating-point tensors (summed in float64,
    stored in their own dtype); other tensors (integer counters) are the newest one's. The
    checkpoints must hold the same tensors for the same model (CheckpointError otherwise)."""
    if not checkpoints:
        raise CheckpointError("there are no checkpoints to average")
    newest = checkpoints[-1]
    for other in checkpoints[:-1]:
        if other.meta.get("signature") != newest.meta.get("signature") or {
                key: tuple(t.shape) for key, t in other.tensors.items()} != {
                key: tuple(t.shape) for key, t in newest.tensors.items()}:
            raise CheckpointError(f"the checkpoints of steps {other.meta.get('step')} and "
                                  f"{newest.meta.get('step')} are of different models")
    tensors = {}
    for key, value in newest.tensors.items():
        if value.is_floating_point():
            total = torch.stack([c.tensors[key].double() for c in checkpoints]).mean(0)
            tensors[key] = total.to(value.dtype)
        else:
            tensors[key] = value.clone()
    return Weights(tensors, dict(newest.tied), newest.meta)


@dataclass
class Averaged:
    """What `average` wrote: the new run directory and the steps averaged."""

    output: Path
    steps: list[int]


def average(run_path: str | os.PathLike, output: str | os.PathLike, *, last: int | None = None,
            files: Sequence[str] = ()) -> Averaged:
    """Average the newest `last` (default all) step checkpoints of the run into a new run
    directory `output`: its config.json, `files` (the task's: vocabularies) and a `last`
    checkpoint of the mean weights. Everything is checked before anything is written, and the
    new directory appears whole (written beside it, then renamed)."""
    run, target = RunDir(run_path), Path(output)
    steps = _chosen_steps(run, last)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise WriteError(f"--output {target} already exists; give a new folder")
    weights = [step_checkpoints(run).read_weights(folder.name) for _, folder in steps]
    mean = average_weights(weights)
    copied = ["config.json", *(name for name in files if run.file(name).is_file())]
    with writing(target.parent):
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for name in copied:
            with writing(temporary / name):
                shutil.copyfile(run.file(name), temporary / name)
        info = {"step": steps[-1][0], "epoch": mean.meta.get("epoch"), "metrics": {},
                "averaged": {"run": str(run.path), "steps": [step for step, _ in steps]}}
        RunDir(temporary).save_weights("last", mean, mean.meta, info)
        if target.exists():
            target.rmdir()  # empty: checked above
        os.rename(temporary, target)
    except OSError as error:
        raise WriteError(describe(error, target)) from None
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)
    return Averaged(target, [step for step, _ in steps])


def _chosen_steps(run: RunDir, last: int | None) -> list[tuple[int, Path]]:
    if not run.file("config.json").is_file():
        raise CheckpointError(f"{run.path} is not a run directory (it has no config.json)")
    steps = kept_steps(run)
    if not steps:
        raise CheckpointError(f"{run.path} keeps no step checkpoints to average: train it with "
                              f"train.keep_checkpoints: N (it keeps the last N saves)")
    if last is not None and last > len(steps):
        raise CheckpointError(f"--last {last} asks for more checkpoints than the "
                              f"{len(steps)} {run.path} keeps (steps "
                              f"{', '.join(str(step) for step, _ in steps)})")
    return steps[-last:] if last is not None else steps
