"""A run directory: the config, the `last` and `best` checkpoints, and the caller's files.

    runs/x/
      config.json          the experiment config (written by the caller)
      src_vocab.json ...   the task's own files (its vocabularies)
      last/                model.safetensors, training_state.pt, meta.json
      best/                model.safetensors, meta.json (no optimiser state: it is for decoding)
      metrics.jsonl, tensorboard/

A checkpoint directory is replaced atomically: it is written as `last.tmp/`, the old one is
renamed to `last.old/`, the new one renamed to `last/`, then `last.old/` removed. A crash at any
point leaves either `last/` or `last.old/` complete, and loading falls back to `last.old/`.
meta.json records the sha256 of the directory's other files, so a file damaged or copied in from
another checkpoint is refused on load (checkpoints written before the hashes load unchecked).
Loading never unpickles code: weights come from safetensors, the rest via
`torch.load(weights_only=True)` and JSON. A failed write is one WriteError sentence.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
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

from attnlab.errors import CheckpointError, WriteError
from attnlab.files import atomic_output, describe, writing
from attnlab.version import __version__

from .formats import FORMAT_VERSION, checked_config, checked_meta, checked_training_state
from .identity import (
    META_FILE,
    MODEL_FILE,
    STATE_FILE,
    check_files,
    check_parameters,
    check_signature,
)

CHECKPOINTS = ("best", "last")  # the order a run is loaded in when none is named

_NAME = re.compile(r"[A-Za-z0-9_-]+")


@dataclass
class Weights:
    """A checkpoint's stored tensors (name -> CPU tensor), the names tied to them (name -> the
    stored name), and its meta.json."""

    tensors: dict[str, torch.Tensor]
    tied: dict[str, str]
    meta: dict


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

    def make(self) -> None:
        """Create the run directory (and its parents); WriteError when that is impossible."""
        with writing(self.path):
            self.path.mkdir(parents=True, exist_ok=True)

    def write_config(self, config: Mapping) -> Path:
        """Write config.json (a plain dict, e.g. `config_to_dict(cfg)`), atomically."""
        self.make()
        with atomic_output(self.file("config.json")) as file:
            json.dump(config, file, indent=2)
            file.write("\n")
        return self.file("config.json")

    def read_config(self) -> dict:
        """config.json as plain data, in the current format (see formats.py)."""
        return checked_config(_read_json(self.file("config.json")))

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
        WriteError (naming the checkpoint; the previous one stays loadable) if it cannot be
        written: no space left, a read-only file system...
        """
        files = {MODEL_FILE: _model_bytes(model)}
        if training_state is not None:
            files[STATE_FILE] = _state_bytes(training_state)
        return self._save_files(name, files, _meta(model, signature, info or {}, files))

    def save_weights(self, name: str, weights: Weights, like: dict, info: dict) -> Path:
        """Atomically write checkpoint `name` (no training state) holding `weights` (as
        `read_weights` gives them) for the model checkpoint meta `like` was written for (its
        model_class, signature and parameters are copied); info: meta.json's extras."""
        data = safetensors.torch.save(weights.tensors, metadata=weights.tied or None)
        files = {MODEL_FILE: data}
        meta = {"format_version": FORMAT_VERSION, "attnlab_version": __version__,
                **{key: like[key] for key in ("model_class", "signature", "parameters")
                   if key in like}, **info, "files": _hashes(files)}
        return self._save_files(name, files, meta)

    def read_weights(self, name: str) -> Weights:
        """Checkpoint `name`'s stored tensors on the CPU, checked against its meta.json (tied
        weights once, under their first name, as saved)."""
        directory = self._require(name)
        meta = _read_meta(directory)
        check_files(directory, meta)
        try:
            with safetensors.safe_open(directory / MODEL_FILE, framework="pt") as file:
                tied = dict(file.metadata() or {})
                tensors = {key: file.get_tensor(key) for key in file.keys()}
        except Exception as error:
            raise CheckpointError(f"cannot load {directory / MODEL_FILE} (damaged?): "
                                  f"{_first_line(error)}") from None
        return Weights(tensors, tied, meta)

    def _save_files(self, name: str, files: dict[str, bytes], meta: dict) -> Path:
        _check_name(name)
        final, temporary = self.path / name, self.path / f"{name}.tmp"
        previous = self.saved_step(name)
        try:
            _write_checkpoint(temporary, files, meta)
            _replace(final, temporary, self.path / f"{name}.old")
        except OSError as error:
            with contextlib.suppress(OSError):
                shutil.rmtree(temporary)
            kept = "" if previous is None else f" (the previous {name}/, step {previous}, is kept)"
            raise WriteError(describe(error, final) + kept) from None
        return final

    def saved_step(self, name: str = "last"):
        """The step checkpoint `name` was saved at, or None (no such checkpoint, or its
        meta.json unreadable): for messages, never a reason to fail."""
        directory = self.checkpoint_dir(name)
        if directory is None:
            return None
        with contextlib.suppress(OSError, ValueError, AttributeError):
            return json.loads((directory / META_FILE).read_text(encoding="utf-8")).get("step")
        return None

    def read_meta(self, name: str = "last") -> dict:
        """meta.json of a checkpoint: signature, step, metrics, parameter shapes."""
        return _read_meta(self._require(name))

    def load_checkpoint(self, name: str, model: nn.Module,
                        signature: dict | None = None) -> Checkpoint:
        """Load the weights into `model` (in place) and read the training state.

        signature: when given, must equal the one saved (else CheckpointError); the parameter
        names and shapes must always match the model's, and each file the one meta.json
        recorded (its sha256).
        """
        directory = self._require(name)
        meta = _read_meta(directory)
        if signature is not None:
            check_signature(directory, meta, type(model).__name__, signature)
        check_parameters(directory, meta, model)
        check_files(directory, meta)
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


def _model_bytes(model: nn.Module) -> bytes:
    """The weights as safetensors; of tensors that are one (tied weights) only the first name
    is stored, as safetensors.torch.save_model does (load_model refills the others)."""
    tensors: dict[str, torch.Tensor] = {}
    seen: dict[tuple[int, torch.dtype, tuple[int, ...], tuple[int, ...]], str] = {}
    tied: dict[str, str] = {}
    for key, value in model.state_dict().items():
        identity = (value.data_ptr(), value.dtype, tuple(value.shape), value.stride())
        if value.numel() and identity in seen:
            tied[key] = seen[identity]
            continue
        seen[identity] = key
        tensors[key] = value.detach().cpu().contiguous()
    return safetensors.torch.save(tensors, metadata=tied or None)


def _state_bytes(training_state: dict) -> bytes:
    # Serialised in memory and written by us: torch.save's own writer reports a full disk as
    # "PytorchStreamWriter failed writing file", without the reason.
    buffer = io.BytesIO()
    torch.save(training_state, buffer)
    return buffer.getvalue()


def _meta(model: nn.Module, signature: dict, info: dict, files: dict[str, bytes]) -> dict:
    return {"format_version": FORMAT_VERSION, "attnlab_version": __version__,
            "model_class": type(model).__name__, "signature": signature, **info,
            "parameters": {key: list(value.shape) for key, value in model.state_dict().items()},
            "files": _hashes(files)}


def _hashes(files: dict[str, bytes]) -> dict:
    return {name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
            for name, data in files.items()}


def _write_checkpoint(directory: Path, files: dict[str, bytes], meta: dict) -> None:
    if directory.exists():  # left by an earlier crash mid-write
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    for name, data in files.items():
        _write_file(directory / name, data)
    _write_file(directory / META_FILE, (json.dumps(meta, indent=2) + "\n").encode("utf-8"))
    _fsync_dir(directory)


def _replace(final: Path, temporary: Path, old: Path) -> None:
    """`temporary` becomes `final`; the old `final` survives as `old` until then."""
    if final.exists():
        if old.exists():
            shutil.rmtree(old)
        os.rename(final, old)
    os.rename(temporary, final)
    _fsync_dir(final.parent)
    if old.exists():
        shutil.rmtree(old)


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def _load_state(path: Path) -> dict:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # truncated zip, or objects weights_only refuses to build
        raise CheckpointError(f"cannot load {path} (damaged?): {_first_line(error)}") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} is not a training state (it holds a "
                              f"{type(state).__name__}, not a table)")
    return checked_training_state(state)


def _read_meta(directory: Path) -> dict:
    """meta.json in the current format (see formats.py)."""
    meta = _read_json(directory / META_FILE)
    if not isinstance(meta, dict):
        raise CheckpointError(f"{directory / META_FILE} is damaged: it is not a JSON object")
    return checked_meta(meta, directory)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path} is missing") from None
    except (OSError, ValueError) as error:
        raise CheckpointError(f"cannot read {path}: {_first_line(error)}") from None


def _fsync_dir(path: Path) -> None:
    """Make renames inside `path` durable (not possible on every OS, e.g. Windows)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
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
