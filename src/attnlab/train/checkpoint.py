"""A run directory: the config, the `last` and `best` checkpoints, and the caller's files.

    runs/x/
      config.json          the experiment config (written by the caller)
      vocab.src.model ...  files the caller keeps with the run (`keep_file`)
      last/                model.safetensors, training_state.pt, meta.json
      best/                model.safetensors, meta.json (no optimiser state: it is for decoding)
      tensorboard/

A checkpoint directory is replaced atomically: it is written as `last.tmp/`, the old one is
renamed to `last.old/`, the new one renamed to `last/`, then `last.old/` removed. A crash at any
point leaves either `last/` or `last.old/` complete, and loading falls back to `last.old/`.
Loading never unpickles code: weights come from safetensors, the rest via
`torch.load(weights_only=True)` and JSON.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import safetensors.torch
import torch
from torch import nn

import attnlab
from attnlab.errors import CheckpointError

MODEL_FILE = "model.safetensors"
STATE_FILE = "training_state.pt"
META_FILE = "meta.json"
FORMAT_VERSION = 1
_NAME = re.compile(r"[A-Za-z0-9_-]+")


@dataclass
class Checkpoint:
    """What `RunDir.load_checkpoint` read: meta.json, and the training state (None in `best`)."""

    path: Path
    meta: dict
    training_state: dict | None


class RunDir:
    """The directory of one training run (created on first write)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @property
    def tensorboard_dir(self) -> Path:
        return self.path / "tensorboard"

    def file(self, name: str) -> Path:
        """Path of a file in the run directory's root (it may not exist yet)."""
        return self.path / name

    def keep_file(self, source: str | os.PathLike, name: str | None = None) -> Path:
        """Copy a file (a vocabulary, say) into the run directory, atomically."""
        target = self.file(name or Path(source).name)
        self.path.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(target.name + ".tmp")
        shutil.copyfile(source, temporary)
        _fsync_file(temporary)
        os.replace(temporary, target)
        return target

    def write_config(self, config: Mapping) -> Path:
        """Write config.json (a plain dict, e.g. `config_to_dict(cfg)`), atomically."""
        self.path.mkdir(parents=True, exist_ok=True)
        target = self.file("config.json")
        _write_json(target.with_name("config.json.tmp"), config)
        os.replace(target.with_name("config.json.tmp"), target)
        return target

    def read_config(self) -> dict:
        return _read_json(self.file("config.json"))

    def checkpoint_dir(self, name: str = "last") -> Path | None:
        """The complete checkpoint called `name`, or `name.old` left by a crash, or None."""
        _check_name(name)
        for candidate in (self.path / name, self.path / f"{name}.old"):
            if candidate.is_dir():
                return candidate
        return None

    def has_checkpoint(self, name: str = "last") -> bool:
        return self.checkpoint_dir(name) is not None

    def save_checkpoint(self, name: str, model: nn.Module, signature: dict, *,
                        training_state: dict | None = None, info: dict | None = None) -> Path:
        """Atomically replace checkpoint `name` with the model's weights.

        signature: the task's model description (checked on load); training_state: tensors and
        plain containers only; info: JSON-able extras for meta.json (step, epoch, metrics).
        """
        _check_name(name)
        final, temporary, old = (self.path / name, self.path / f"{name}.tmp",
                                 self.path / f"{name}.old")
        if temporary.exists():  # left by an earlier crash mid-write
            shutil.rmtree(temporary)
        temporary.mkdir(parents=True)
        _write_checkpoint(temporary, model, signature, training_state, info or {})
        if final.exists():
            if old.exists():
                shutil.rmtree(old)
            os.rename(final, old)
        os.rename(temporary, final)
        _fsync_dir(self.path)
        if old.exists():
            shutil.rmtree(old)
        return final

    def read_meta(self, name: str = "last") -> dict:
        """meta.json of a checkpoint: signature, step, metrics, parameter shapes."""
        return _read_json(self._require(name) / META_FILE)

    def load_checkpoint(self, name: str, model: nn.Module,
                        signature: dict | None = None) -> Checkpoint:
        """Load the weights into `model` (in place) and read the training state.

        signature: when given, must equal the one saved (else CheckpointError); the parameter
        names and shapes must always match the model's.
        """
        directory = self._require(name)
        meta = _read_json(directory / META_FILE)
        if signature is not None:
            _check_signature(directory, meta, type(model).__name__, signature)
        _check_parameters(directory, meta, model)
        try:
            safetensors.torch.load_model(model, directory / MODEL_FILE, strict=True)
        except Exception as error:  # header, size or truncation problems
            raise CheckpointError(f"cannot load {directory / MODEL_FILE} (damaged?): "
                                  f"{_first_line(error)}") from None
        state = None
        if (directory / STATE_FILE).exists():
            state = _load_state(directory / STATE_FILE)
        return Checkpoint(directory, meta, state)

    def _require(self, name: str) -> Path:
        directory = self.checkpoint_dir(name)
        if directory is None:
            raise CheckpointError(f"no checkpoint {self.path / name}: {_listing(self.path)}")
        return directory


def _write_checkpoint(directory: Path, model: nn.Module, signature: dict,
                      training_state: dict | None, info: dict) -> None:
    # save_model (not save_file) drops the duplicate names of tied weights; load_model refills.
    safetensors.torch.save_model(model, str(directory / MODEL_FILE))
    _fsync_file(directory / MODEL_FILE)
    if training_state is not None:
        torch.save(training_state, directory / STATE_FILE)
        _fsync_file(directory / STATE_FILE)
    meta = {"format_version": FORMAT_VERSION, "attnlab_version": attnlab.__version__,
            "model_class": type(model).__name__, "signature": signature, **info,
            "parameters": {key: list(value.shape) for key, value in model.state_dict().items()}}
    _write_json(directory / META_FILE, meta)
    _fsync_dir(directory)


def _check_signature(directory: Path, meta: dict, model_class: str, signature: dict) -> None:
    saved = {"model_class": meta.get("model_class"), "signature": meta.get("signature")}
    # The JSON round trip makes tuples lists, as they are in the saved meta.
    wanted = {"model_class": model_class, "signature": json.loads(json.dumps(signature))}
    difference = _first_difference(saved, wanted)
    if difference is not None:
        key, old, new = difference
        raise CheckpointError(f"checkpoint {directory} was written for a different model: "
                              f"{key} is {old!r} there but {new!r} in this config")


def _first_difference(old, new, prefix: str = ""):
    """(dotted key, old value, new value) of the first difference, or None.

    A key the old (saved) side lacks matches a new value of None or False: config keys added in
    later versions default to "off", so runs written before them still load."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in old and (new[key] is None or new[key] is False):
                continue
            if key not in old or key not in new:
                return path, old.get(key, "<absent>"), new.get(key, "<absent>")
            found = _first_difference(old[key], new[key], path)
            if found is not None:
                return found
        return None
    return None if old == new else (prefix, old, new)


def _check_parameters(directory: Path, meta: dict, model: nn.Module) -> None:
    saved = meta.get("parameters", {})
    mine = {key: list(value.shape) for key, value in model.state_dict().items()}
    for key, shape in mine.items():
        if key not in saved:
            raise CheckpointError(f"checkpoint {directory} has no parameter {key!r}, which "
                                  f"this model has; it was written for another model")
        if saved[key] != shape:
            raise CheckpointError(f"checkpoint {directory} has {key!r} of shape {saved[key]} "
                                  f"but this model's is {shape}")
    extra = [key for key in saved if key not in mine]
    if extra:
        raise CheckpointError(f"checkpoint {directory} has parameter {extra[0]!r}, which this "
                              f"model lacks; it was written for another model")


def _load_state(path: Path) -> dict:
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # truncated zip, or objects weights_only refuses to build
        raise CheckpointError(f"cannot load {path} (damaged?): {_first_line(error)}") from None


def _write_json(path: Path, data) -> None:
    with open(path, "w", encoding="utf-8") as file:
        json.dump(data, file, indent=2)
        file.write("\n")
        file.flush()
        os.fsync(file.fileno())


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path} is missing") from None
    except (OSError, ValueError) as error:
        raise CheckpointError(f"cannot read {path}: {_first_line(error)}") from None


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as file:
        os.fsync(file.fileno())


def _fsync_dir(path: Path) -> None:
    """Make renames inside `path` durable (not possible on every OS, e.g. Windows)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise ValueError(f"checkpoint name must be letters, digits, '_' or '-', got {name!r}")


def _listing(path: Path) -> str:
    if not path.is_dir():
        return f"the run directory {path} does not exist"
    names = sorted(p.name for p in path.iterdir())
    return f"the run directory holds {', '.join(names[:10]) if names else 'nothing'}"


def _first_line(error: Exception) -> str:
    """The error's first sentence, so that our message stays one sentence."""
    lines = str(error).strip().splitlines()
    return lines[0].split(". ")[0].rstrip(".") if lines else type(error).__name__
