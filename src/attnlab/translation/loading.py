"""A trained run, ready to decode: its config, vocabularies and the `best` or `last` weights.

    run = load_run("runs/bahdanau")              # best checkpoint if there is one, else last
    for result in run.translate(lines, beam=5):  # TranslationResult per line, input order
        print(result.text)

Loading needs only the run directory (config.json, src_vocab.*, tgt_vocab.*, best/ or last/),
never the training data.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from attnlab.config import config_from_dict
from attnlab.decode import TranslationResult, iter_translate
from attnlab.errors import CheckpointError, ConfigError
from attnlab.models import Seq2Seq, build_model
from attnlab.train.checkpoint import RunDir

from .config import RunConfig
from .corpus import Vocabularies

CHECKPOINTS = ("best", "last")


@dataclass
class TrainedRun:
    """A run directory's model (eval mode, on `device`), vocabularies and config."""

    directory: Path
    config: RunConfig
    vocabs: Vocabularies
    model: Seq2Seq
    checkpoint: str  # "best" or "last": the weights that were loaded
    meta: dict       # the checkpoint's meta.json: step, metrics, ...

    @property
    def has_attention(self) -> bool:
        return self.config.model.decoder.kind != "none"

    @property
    def character_level(self) -> bool:
        """Whether the run reads characters; then a character is its unit of alignment, since
        the gold alignments of such tasks (the dates task) link characters."""
        return self.config.data.vocab == "char"

    def translate(self, lines: Iterable[str], *, beam: int | None = None,
                  alpha: float | None = None, batch_size: int | None = None,
                  pool_size: int | None = None) -> Iterator[TranslationResult]:
        """Yield one TranslationResult per line, in input order, with the run's decode settings
        (beam, alpha, batch_size override them). `pool_size` lines are read and decoded at a
        time (1 answers each line as soon as it is read; default 100 batches)."""
        decode = self.config.decode
        return iter_translate(
            self.model, self.vocabs, lines, beam_size=decode.beam if beam is None else beam,
            alpha=decode.alpha if alpha is None else alpha, max_len_ratio=decode.max_len_ratio,
            max_len_extra=decode.max_len_extra,
            batch_size=decode.batch_size if batch_size is None else batch_size,
            pool_size=pool_size)


def pick_device(name: str = "auto") -> torch.device:
    """"auto" is the first CUDA device when there is one, else the CPU; other names as torch."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ConfigError(f"unknown device {name!r}; use auto, cpu, cuda or cuda:N") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r} was asked for but this machine has no CUDA device")
    return device


def choose_checkpoint(run_dir: RunDir, name: str | None) -> str:
    """`name`, or "best" when the run has one and else "last"; CheckpointError (one sentence)
    when the directory is not a run or holds no checkpoint yet."""
    if not run_dir.path.is_dir():
        raise CheckpointError(f"run directory {run_dir.path} does not exist")
    found = [candidate for candidate in CHECKPOINTS if run_dir.has_checkpoint(candidate)]
    if not found:
        raise CheckpointError(f"run directory {run_dir.path} has no checkpoint (best/ or last/) "
                              f"yet; train it first with attnlab train")
    if name is None:
        return found[0]
    if name not in found:
        raise CheckpointError(f"run directory {run_dir.path} has no {name!r} checkpoint, only "
                              f"{' and '.join(repr(f) for f in found)}")
    return name


def load_run(directory: str | Path, checkpoint: str | None = None,
             device: str | torch.device = "cpu") -> TrainedRun:
    """Load a run directory's config, vocabularies and weights (`checkpoint`: "best", "last",
    or None for best-else-last) into a model in eval mode on `device`."""
    run_dir = RunDir(directory)
    name = choose_checkpoint(run_dir, checkpoint)
    config_file = run_dir.file("config.json")
    config = config_from_dict(run_dir.read_config(), RunConfig, origin=str(config_file))
    if not Vocabularies.exist_in(run_dir.path):
        raise CheckpointError(f"run directory {run_dir.path} has no vocabularies "
                              f"(src_vocab.json, tgt_vocab.json)")
    vocabs = Vocabularies.load(run_dir.path)
    model = build_model(config.model, len(vocabs.src), len(vocabs.tgt),
                        max_src_len=config.data.max_len + 1)
    loaded = run_dir.load_checkpoint(name, model)
    device = pick_device(device) if isinstance(device, str) else device
    return TrainedRun(run_dir.path, config, vocabs, model.to(device).eval(), name, loaded.meta)
