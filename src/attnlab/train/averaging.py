"""Checkpoint averaging: the weights of a run's last N step checkpoints, element by element
(as onmt_average_models and fairseq's average_checkpoints.py do; Vaswani et al. 2017, sec. 6.1,
average their last 5 or 20).

With `train.keep_checkpoints: N` every save of `last` also writes a weights-only copy,

    runs/x/checkpoints/step-00001200/   model.safetensors, meta.json

atomically (as every checkpoint is), and only the newest N stay. `average` writes a new run
directory whose `last` checkpoint holds their mean, with the run's config and its task's files,
so every command reads it like the run itself.

It also averages the kept checkpoints of several runs (as onmt_average_models and fairseq's
script average any checkpoints they are given), when the mean can be a model: the runs share
the task and the model (its config, every tensor's shape), what it reads and writes (SAME_KEYS:
a translation's languages), their vocabularies piece for piece (a row of an embedding must mean
the same piece in each) and the way they split text (a sentencepiece model's scores and
normalisation), and their initial weights (train.seed). Separately initialised networks have
their hidden units in different orders, so their mean is not a working model: that is refused,
naming the ensemble, which combines such runs by their predictions. Each refusal is one sentence
naming both runs and what differs.
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

from attnlab.data.vocab import SentencePieceVocab, Vocab, load_vocab
from attnlab.errors import CheckpointError, DataError, WriteError
from attnlab.files import describe, writing

from .checkpoint import RunDir, Weights

STEPS_DIR = "checkpoints"  # inside a run directory
_STEP = re.compile(r"step-(\d+)")
# config.json keys that say what a model reads and writes beyond its shape (which its
# checkpoint's signature holds): a de-en and an en-de run of one joint vocabulary have the same
# tensors and vocabularies, and their mean translates neither way. A key a run lacks is None.
SAME_KEYS = ("task", "data.src_lang", "data.tgt_lang")


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
    """What `average` wrote: the new run directory, and each run averaged with its steps."""

    output: Path
    runs: list[tuple[Path, list[int]]]

    @property
    def steps(self) -> list[int]:
        """The steps averaged, run by run, oldest first."""
        return [step for _, steps in self.runs for step in steps]


RunPaths = str | os.PathLike | Sequence[str | os.PathLike]


def average(run_paths: RunPaths, output: str | os.PathLike, *, last: int | None = None,
            files: Sequence[str] = ()) -> Averaged:
    """Average the newest `last` (default all) step checkpoints of a run, or of each of several
    runs (every checkpoint counts once), into a new run directory `output`: the first run's
    config.json, `files` (the task's: vocabularies) and a `last` checkpoint of the mean
    weights. Several runs must share their model, the contents of `files` and train.seed (see
    the module docstring). Everything is checked before anything is written, and the new
    directory appears whole (written beside it, then renamed)."""
    paths = [run_paths] if isinstance(run_paths, (str, os.PathLike)) else list(run_paths)
    runs, target = [RunDir(path) for path in paths], Path(output)
    _check_distinct(runs)
    chosen = [_chosen_steps(run, last) for run in runs]
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise WriteError(f"--output {target} already exists; give a new folder")
    _check_same_start(runs)
    _check_same_settings(runs)
    _check_same_files(runs, files)
    weights = [[step_checkpoints(run).read_weights(folder.name) for _, folder in steps]
               for run, steps in zip(runs, chosen, strict=True)]
    _check_same_model(runs, weights)
    # The first run's newest checkpoint goes last: average_weights keeps its meta and integer
    # tensors, as the new run keeps the first run's config and files.
    mean = average_weights([w for found in weights[1:] for w in found] + weights[0])
    first = runs[0]
    copied = ["config.json", *(name for name in files if first.file(name).is_file())]
    averaged = [{"run": str(run.path), "steps": [step for step, _ in steps]}
                for run, steps in zip(runs, chosen, strict=True)]
    with writing(target.parent):
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for name in copied:
            with writing(temporary / name):
                shutil.copyfile(first.file(name), temporary / name)
        info = {"step": chosen[0][-1][0], "epoch": mean.meta.get("epoch"), "metrics": {},
                "averaged": averaged[0] if len(runs) == 1 else {"runs": averaged}}
        RunDir(temporary).save_weights("last", mean, mean.meta, info)
        if target.exists():
            target.rmdir()  # empty: checked above
        os.rename(temporary, target)
    except OSError as error:
        raise WriteError(describe(error, target)) from None
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)
    return Averaged(target, [(run.path, [step for step, _ in steps])
                             for run, steps in zip(runs, chosen, strict=True)])


def _check_distinct(runs: Sequence[RunDir]) -> None:
    seen: dict[Path, Path] = {}
    for run in runs:
        where = run.path.resolve()
        if where in seen:
            raise CheckpointError(f"--run {run.path} is given twice"
                                  + (f" (as {seen[where]})" if seen[where] != run.path else "")
                                  + "; each run's checkpoints count once")
        seen[where] = run.path


def _check_same_start(runs: Sequence[RunDir]) -> None:
    """CheckpointError unless the runs were trained with the same train.seed, which seeds
    their initial weights."""
    first, seed = runs[0], _train_seed(runs[0])
    for other in runs[1:]:
        if _train_seed(other) != seed:
            raise CheckpointError(
                f"{first.path} and {other.path} started from different initial weights "
                f"(train.seed {seed} and {_train_seed(other)}), and the mean of separately "
                f"initialised networks is not a working model (their hidden units are in "
                f"different orders): average runs of one train.seed, or ensemble them "
                f"(translate and evaluate take --run more than once)")


def _train_seed(run: RunDir) -> object:
    return _setting(run.read_config(), "train.seed")


def _setting(config: dict, dotted: str) -> object:
    """The value of a dotted key in a config (None where it has none)."""
    value: object = config
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _check_same_settings(runs: Sequence[RunDir]) -> None:
    """CheckpointError naming the two runs and the key unless every run has the first run's
    SAME_KEYS."""
    first = runs[0].read_config()
    for other in runs[1:]:
        theirs = other.read_config()
        for key in SAME_KEYS:
            if _setting(first, key) != _setting(theirs, key):
                raise CheckpointError(
                    f"{runs[0].path} and {other.path} differ in {key} ({_setting(first, key)!r} "
                    f"and {_setting(theirs, key)!r}), so the mean of their weights is neither "
                    f"model; average runs that agree on {key}")


def _check_same_files(runs: Sequence[RunDir], files: Sequence[str]) -> None:
    """CheckpointError naming the two runs and the file unless every run has the first run's
    `files`: a vocabulary (NAME.json) compared piece by piece, any other file byte by byte
    (NAME.model and NAME.vocab of a vocabulary are compared through NAME.json: a
    sentencepiece model file also records the folder it was trained in)."""
    first = runs[0]
    compared = [name for name in files
                if not (Path(name).suffix != ".json" and f"{Path(name).stem}.json" in files)]
    for other in runs[1:]:
        for name in compared:
            mine, theirs = first.file(name), other.file(name)
            if mine.is_file() != theirs.is_file():
                has, lacks = (first, other) if mine.is_file() else (other, first)
                raise CheckpointError(f"{has.path} has {name} and {lacks.path} has not, so "
                                      f"they were trained on other vocabularies; average "
                                      f"runs that share theirs")
            if not mine.is_file():
                continue
            difference = _difference(mine, theirs)
            if difference:
                raise CheckpointError(
                    f"{first.path} and {other.path} have different {name}: {difference}, so "
                    f"their weights cannot be averaged (an embedding row means another piece "
                    f"in each); average runs that share their vocabularies")


def _difference(mine: Path, theirs: Path) -> str | None:
    """How two copies of a run file differ ("id 5 is 'Haus' in one and 'Hund' in the
    other"), or None when they hold the same."""
    if mine.suffix == ".json":
        try:
            vocabs = [load_vocab(path.parent, path.stem) for path in (mine, theirs)]
        except DataError:  # not a vocabulary: compared as bytes
            pass
        else:
            return _vocab_difference(*vocabs)
    return None if mine.read_bytes() == theirs.read_bytes() else "their contents differ"


def _vocab_difference(mine: Vocab, theirs: Vocab) -> str | None:
    """How two vocabularies differ in what a token id means, or in how they split text."""
    one, two = _pieces(mine), _pieces(theirs)
    if one[0] != two[0]:
        return f"a {one[0]} vocabulary in one and a {two[0]} vocabulary in the other"
    for index, (a, b) in enumerate(zip(one[1], two[1], strict=False)):
        if a != b:
            return f"id {index} is {a!r} in one and {b!r} in the other"
    if len(one[1]) != len(two[1]):
        return f"{len(one[1])} pieces in one and {len(two[1])} in the other"
    if isinstance(mine, SentencePieceVocab) and isinstance(theirs, SentencePieceVocab) and \
            mine.splitting() != theirs.splitting():
        return ("the same pieces but other sentencepiece scores, normalisation or options, so "
                "they split text differently")
    return None


def _pieces(vocab: Vocab) -> tuple[str, list[str]]:
    """A vocabulary's kind and its pieces, id by id: what a token id means."""
    return vocab.kind, [vocab.id_to_piece(index) for index in range(len(vocab))]


def _check_same_model(runs: Sequence[RunDir], weights: Sequence[Sequence[Weights]]) -> None:
    """CheckpointError naming the runs and what differs (the task, a key of the model config,
    a vocabulary's size, a tensor) unless every run's checkpoints are of the first run's model
    (signature and tensor shapes); average_weights checks it again, step by step."""
    def model(found: Weights) -> dict:
        return {"signature": found.meta.get("signature"),
                "tensor": {key: list(tensor.shape) for key, tensor in found.tensors.items()}}

    wanted = model(weights[0][-1])
    for run, found in zip(runs[1:], weights[1:], strict=True):
        difference = _first_difference(wanted, model(found[-1]))
        if difference:
            raise CheckpointError(f"{runs[0].path} and {run.path} are of different models "
                                  f"({difference}), so their weights cannot be averaged")


def _first_difference(mine: object, theirs: object, key: str = "") -> str | None:
    """"signature.model.decoder.kind is 'luong' in one and 'bahdanau' in the other" for the
    first key (depth first) where two JSON-like values differ, None where they do not."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for name in [*mine, *(name for name in theirs if name not in mine)]:
            found = _first_difference(mine.get(name), theirs.get(name),
                                      f"{key}.{name}" if key else str(name))
            if found:
                return found
        return None
    if mine == theirs:
        return None
    shown = key.removeprefix("signature.")
    return f"{shown} is {mine!r} in one and {theirs!r} in the other"


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
