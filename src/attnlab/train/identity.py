"""A checkpoint's identity: its files are the ones its meta.json recorded (sha256), and it was
written for this model (signature and parameter shapes). Every check raises one CheckpointError
sentence before anything reads the file it is about."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from torch import nn

from attnlab.errors import CheckpointError
from attnlab.files import describe

MODEL_FILE = "model.safetensors"
STATE_FILE = "training_state.pt"
META_FILE = "meta.json"


def check_files(directory: Path, meta: dict) -> None:
    """Each file is the one meta.json recorded: a damaged file, or one copied in from another
    checkpoint (another run's training state, say), is refused before anything reads it."""
    recorded = meta.get("files")
    for name in (MODEL_FILE, STATE_FILE):
        path, entry = directory / name, recorded.get(name) if isinstance(recorded, dict) else None
        if entry is None:
            if path.exists():
                raise CheckpointError(f"{path} does not belong to checkpoint {directory}: its "
                                      f"{META_FILE} records no {name} (copied in from another "
                                      f"run?)")
            continue
        if not path.is_file():
            raise CheckpointError(f"{path} is missing")
        wanted = entry.get("sha256") if isinstance(entry, dict) else None
        if sha256_of(path) != wanted:
            raise CheckpointError(f"{path} is not the file checkpoint {directory} saved (step "
                                  f"{meta.get('step', '?')}): its content differs from what "
                                  f"{META_FILE} records (damaged, or copied from another run)")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise CheckpointError(describe(error, path, "read")) from None
    return digest.hexdigest()


def check_signature(directory: Path, meta: dict, model_class: str, signature: dict) -> None:
    saved = {"model_class": meta.get("model_class"), "signature": meta.get("signature")}
    # The JSON round trip makes tuples lists, as they are in the saved meta.
    wanted = {"model_class": model_class, "signature": json.loads(json.dumps(signature))}
    difference = first_difference(saved, wanted)
    if difference is not None:
        key, old, new = difference
        raise CheckpointError(f"checkpoint {directory} was written for a different model: "
                              f"{key} is {old!r} there but {new!r} in this config")


def first_difference(old, new, prefix: str = ""):
    """(dotted key, old value, new value) of the first difference between two configs or
    signatures as plain data, or None; a key one side lacks is "<absent>" there."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in old or key not in new:
                return path, old.get(key, "<absent>"), new.get(key, "<absent>")
            found = first_difference(old[key], new[key], path)
            if found is not None:
                return found
        return None
    return None if old == new else (prefix, old, new)


def check_parameters(directory: Path, meta: dict, model: nn.Module) -> None:
    saved = meta.get("parameters", {})
    if not isinstance(saved, dict):
        raise CheckpointError(f"{directory / META_FILE} is damaged: 'parameters' is not a table")
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
