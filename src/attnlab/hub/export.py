"""`attnlab export`: a trained run as a self-contained model directory, to hand over.

    models/x/
      config.json          the run's experiment config, absolute paths made relative to x/
      src_vocab.json ...   the task's files (vocabularies, sentencepiece models)
      metrics.jsonl        the run's training curves (when it has them)
      best/                model.safetensors (the exported checkpoint's weights) and meta.json
      MODEL.md             the model card

It is itself a run directory with one checkpoint and no training state, so every command and
loader that reads a run reads it unchanged (checkpoint choice, signature and sha256 checks).
Nothing is written until the run has loaded; the folder is written as a temporary folder beside
it, loaded back, then renamed: it is either complete or absent.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from attnlab.errors import CheckpointError, WriteError
from attnlab.files import writing
from attnlab.recipes import Recipe, recipe_of_run
from attnlab.train import RunDir, choose_checkpoint
from attnlab.train.identity import META_FILE, MODEL_FILE
from attnlab.train.monitor import METRICS_FILE, read_curves
from attnlab.train.runs import not_a_run, runs_inside
from attnlab.version import __version__

from .card import CardFacts, model_card

CARD_FILE = "MODEL.md"
CHECKPOINT = "best"  # the model directory's one checkpoint, whichever the run's it came from
# Paths kept as they are: loading reads them (the ResNet is built from its file, then replaced)
NEEDED_TO_LOAD = {"model.encoder.weights"}


@dataclass
class Export:
    """What `export_model` wrote: path, task, checkpoint (the run's: "best" or "last"), step,
    and the sizes in bytes of the run directory and of the model directory."""

    path: Path
    task: str
    checkpoint: str
    step: int | None
    run_bytes: int
    model_bytes: int


def export_model(run: str | os.PathLike, output: str | os.PathLike, *,
                 checkpoint: str | None = None, overwrite: bool = False) -> Export:
    """Write the model directory `output` from the run directory `run` (`checkpoint`: "best",
    "last", or None for best-else-last). `overwrite` replaces an earlier export at `output`;
    any other existing, non-empty folder is refused. A run that does not load (damaged,
    incomplete) is refused before anything is written."""
    source, output = RunDir(run), Path(output)
    _check_run(source)
    _check_output(source.path, output, overwrite)
    name = choose_checkpoint(source, checkpoint)
    kind = recipe_of_run(source.path, name)
    trained = kind.load(source.path, name, device="cpu")  # every check a command would make
    parameters = sum(p.numel() for p in trained.model.parameters())
    with writing(output.parent, "create"):
        output.parent.mkdir(parents=True, exist_ok=True)
    with writing(output.parent):
        temporary = Path(tempfile.mkdtemp(prefix=f".{output.name}.", suffix=".tmp",
                                          dir=output.parent))
    try:
        meta = _write_model(source, name, kind, temporary, output.name, parameters)
        kind.load(temporary, CHECKPOINT, device="cpu")  # the copy loads as the run did
        _move_into_place(temporary, output)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(temporary)
    return Export(output, kind.name, name, meta.get("step"), folder_bytes(source.path),
                  folder_bytes(output))


def folder_bytes(path: Path) -> int:
    """The bytes of every file under `path` (symbolic links not followed)."""
    return sum(entry.stat(follow_symlinks=False).st_size
               for entry in Path(path).rglob("*") if entry.is_file() and not entry.is_symlink())


def _check_run(run: RunDir) -> None:
    path = run.path
    if not path.is_dir():
        raise CheckpointError(f"--run {path} is not a run directory: "
                              f"{'it does not exist' if not path.exists() else 'it is a file'}")
    if not run.file("config.json").is_file() and not any(
            run.has_checkpoint(name) for name in ("best", "last")):
        if runs_inside(path)[0]:  # a suite's folder: name the runs in it
            raise CheckpointError(f"--run {not_a_run(path)}")
        raise CheckpointError(f"--run {path} is not a run directory: it has no config.json and "
                              f"no best/ or last/ checkpoint (attnlab train writes those)")


def _check_output(run: Path, output: Path, overwrite: bool) -> None:
    """`output` can become the model directory: not the run nor inside it (or around it), a
    folder that is empty or absent, or with `overwrite` an earlier export."""
    mine, theirs = output.resolve(), run.resolve()
    if mine == theirs or theirs in mine.parents or mine in theirs.parents:
        raise WriteError(f"--output {output} overlaps the run directory {run}: export to a "
                         f"folder of its own, outside the run")
    for part in (output, *output.parents):
        if part.exists() and not part.is_dir():
            raise WriteError(f"cannot write the model directory {output}: {part} is a file, "
                             f"not a folder")
    if not output.exists() or not any(output.iterdir()):
        return
    if not overwrite:
        raise WriteError(f"--output {output} already exists and is not empty: pass --overwrite "
                         f"to replace an earlier export, or choose another folder")
    if not (output / CARD_FILE).is_file():
        raise WriteError(f"--output {output} is not a model directory attnlab export wrote (it "
                         f"has no {CARD_FILE}), and --overwrite replaces only those: remove it "
                         f"yourself or choose another folder")


def _write_model(run: RunDir, name: str, kind: Recipe, folder: Path, title: str,
                 parameters: int) -> dict:
    """Copy the run's files and the checkpoint's weights into `folder`, then write meta.json
    and MODEL.md; returns the meta written."""
    os.chmod(folder, 0o777 & ~_umask())  # mkdtemp's folder is private; a model is to share
    # config.json in the current format (a run of the format before is upgraded as it is read)
    # relative to the temporary folder: it lies beside the output, so they are the same
    config, relative = portable_config(run.read_config(), folder)
    _write_text(folder / "config.json", json.dumps(config, indent=2) + "\n")
    copied = [file for file in (*kind.run_files, METRICS_FILE) if run.file(file).is_file()]
    for file in copied:
        _copy(run.file(file), folder / file)
    checkpoint = folder / CHECKPOINT
    with writing(checkpoint, "create"):
        checkpoint.mkdir()
    # `name` is choose_checkpoint's: a checkpoint of the run, just loaded
    _copy(cast(Path, run.checkpoint_dir(name)) / MODEL_FILE, checkpoint / MODEL_FILE)
    meta = _exported_meta(run.read_meta(name), name)
    _write_text(checkpoint / META_FILE, json.dumps(meta, indent=2) + "\n")
    files = [(path.relative_to(folder).as_posix(), path.stat().st_size)
             for path in sorted(folder.rglob("*")) if path.is_file()]
    validated = _validated_at(run.file(METRICS_FILE), meta.get("step"))
    card = model_card(CardFacts(kind, title, config, meta, parameters, name, files, validated,
                                relative))
    _write_text(folder / CARD_FILE, card)
    return meta


def portable_config(config: dict, model: Path) -> tuple[dict, list[str]]:
    """The config with each absolute path (data.dir, data.json, ...) written relative to the
    model directory (itself a run directory), so a shared model names no folder of the machine
    that trained it, and commands run inside it on that machine still find the data; returns
    it with the dotted keys rewritten. A path loading reads (NEEDED_TO_LOAD) is kept."""
    base, rewritten = os.path.abspath(model), []

    def portable(value: object, key: str) -> object:
        if isinstance(value, dict):
            return {name: portable(item, f"{key}{name}.") for name, item in value.items()}
        if not isinstance(value, str) or not os.path.isabs(value) or key[:-1] in NEEDED_TO_LOAD:
            return value
        rewritten.append(key[:-1])
        try:
            return Path(os.path.relpath(value, base)).as_posix()
        except ValueError:  # another drive (Windows): no relative path, the name alone
            return Path(value).name

    return cast(dict, portable(config, "")), rewritten


def _validated_at(metrics: Path, step: int | None) -> int | None:
    """The step of the run's last validation at or before `step` (the metrics a checkpoint
    records are those of the last validation), or None when metrics.jsonl does not say."""
    if step is None:
        return None
    steps = [at for name, curve in read_curves(metrics).items() if name.startswith("valid ")
             for at, _ in curve if at <= step]
    return int(max(steps)) if steps else None


def _exported_meta(meta: dict, checkpoint: str) -> dict:
    """The checkpoint's meta.json (in the current format) for the weights alone: its record
    of the training state dropped, the weights' sha256 kept."""
    meta = dict(meta)
    meta["files"] = {MODEL_FILE: meta["files"][MODEL_FILE]}
    meta["exported"] = {"checkpoint": checkpoint, "attnlab_version": __version__}
    return meta


def _move_into_place(temporary: Path, output: Path) -> None:
    """Rename the finished folder to `output`; an existing `output` (empty, or an export being
    replaced) is moved aside first and removed only once the new one is in place."""
    with writing(output):
        if not output.exists():
            os.rename(temporary, output)
            return
        if not any(output.iterdir()):
            output.rmdir()
            os.rename(temporary, output)
            return
        old = Path(tempfile.mkdtemp(prefix=f".{output.name}.", suffix=".old",
                                    dir=output.parent))
        os.rename(output, old / output.name)
        try:
            os.rename(temporary, output)
        except OSError:
            os.rename(old / output.name, output)
            old.rmdir()
            raise
        shutil.rmtree(old, ignore_errors=True)


def _copy(source: Path, target: Path) -> None:
    with writing(target):
        shutil.copyfile(source, target)


def _write_text(path: Path, text: str) -> None:
    with writing(path), open(path, "w", encoding="utf-8", newline="\n") as file:
        file.write(text)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
