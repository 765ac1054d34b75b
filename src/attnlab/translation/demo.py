"""`attnlab demo`: the dates task end to end in a few minutes on two CPU cores.

Generates the dates data, trains a Bahdanau model (character level) until its exact match on
the validation dates reaches a target (99%) or a time cap runs out, prints translations of
held-out dates, the exact-match accuracy on the test split, and writes an alignment heatmap.

Nothing is removed or replaced before every option has been checked, and the model trained
before stays loadable until the new one is finished: the data is written into a new folder that
then takes the old one's place, the model is trained into DIR/run.new and takes the place of
DIR/run only when training ended by itself (target or time cap), and the model it replaces is
kept as DIR/run.previous. An interrupted or failed demo leaves DIR/run as it was.
"""

from __future__ import annotations

import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from attnlab.data import write_dates
from attnlab.data.dates import WIDE
from attnlab.data.not_dates import NOT_A_DATE
from attnlab.errors import ConfigError, UserError
from attnlab.files import writing
from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig
from attnlab.train import run_experiment
from attnlab.train.checkpoint import RunDir
from attnlab.train.config import EarlyStoppingConfig, TrainConfig
from attnlab.viz import plot_alignment

from .config import DataConfig, DecodeConfig, LossConfig, RunConfig
from .corpus import read_split
from .describe import describe_run
from .task import TranslationTask
from .translate import translate

TARGET = 99.0          # validation exact match (percent) at which training stops
MINUTES = 5.0          # the time cap
VALIDATE_EVERY = 100   # updates; a validation (300 dates, checkpoints) costs about 10% of them
THREADS = 1            # torch threads: 2 are 1.25x faster on two idle cores, but 2.5-15x
                       # slower than 1 when other programs use the cores
SMALLEST = 20          # dates: validation and test get a tenth each, at least 2


def demo_config(data_dir: Path, minutes: float, threads: int | None,
                target: float = TARGET) -> RunConfig:
    """The shipped dates-bahdanau config (attnlab config show dates-bahdanau), training until
    the validation exact match reaches `target` or `minutes` run out."""
    return RunConfig(
        data=DataConfig(dir=str(data_dir), train="train", valid="val", test="test",
                        src_lang="src", tgt_lang="tgt", vocab="char", joint_vocab=False,
                        vocab_size=1000, max_len=60, batch_size=64, valid_sentences=300),
        model=ModelConfig(
            encoder=EncoderConfig(embedding_dim=32, hidden_dim=64, dropout=0.0),
            decoder=DecoderConfig(kind="bahdanau", embedding_dim=32, hidden_dim=128, dropout=0.0,
                                  attention=AttentionConfig("additive", hidden_dim=64)),
        ),
        train=TrainConfig(lr=3e-3, max_epochs=None, max_minutes=minutes,
                          validate_every=VALIDATE_EVERY, checkpoint_every=VALIDATE_EVERY,
                          log_every=VALIDATE_EVERY, threads=threads,
                          early_stopping=EarlyStoppingConfig("exact_match", "max",
                                                             target=target)),
        loss=LossConfig(label_smoothing=0.0),
        decode=DecodeConfig(beam=1, max_len_ratio=0.0, max_len_extra=12),
    )


@dataclass
class DemoResult:
    accuracy: float | None  # exact match on the held-out test split, percent (None: not tested)
    test_size: int
    heatmap: Path | None
    run_dir: Path           # where the model is: DIR/run, or DIR/run.new when interrupted
    reached: bool           # the validation exact match reached the target
    valid_accuracy: float   # the best validation exact match, percent (the model tested)
    updates: int
    minutes: float          # training time, validations included


def check_options(directory: Path, minutes: float, size: int, threads: int | None,
                  target: float) -> None:
    """Every option, before anything is written or removed: one sentence naming the first
    that is wrong."""
    if not (math.isfinite(minutes) and minutes > 0):
        raise ConfigError(f"--minutes must be a number of minutes above 0, got {minutes:g}")
    if size < SMALLEST:
        raise ConfigError(f"--size must be at least {SMALLEST} (a tenth each is held out for "
                          f"validation and test), got {size}")
    if threads is not None and threads < 1:
        raise ConfigError(f"--threads must be at least 1, got {threads}")
    if not (math.isfinite(target) and 0 <= target <= 100):
        raise ConfigError(f"--target must be a percentage from 0 to 100, got {target:g}")
    for path in (directory, *directory.parents):
        if path.exists() and not path.is_dir():
            raise UserError(f"--dir {directory}: {path} is a file, not a folder")


def run_demo(directory: str | Path = "runs/demo", *, minutes: float = MINUTES,
             size: int = 10000, threads: int | None = THREADS, target: float = TARGET,
             progress: bool = True, log=print) -> DemoResult:
    """Train until the validation exact match reaches `target` percent or `minutes` run out,
    then test the best model; `DemoResult.reached` says which (the CLI exits 1 when short)."""
    directory = Path(directory)
    check_options(directory, minutes, size, threads, target)
    data_dir, run_dir = directory / "data", directory / "run"
    fresh = directory / "run.new"
    log(f"1/3 generating the dates task ({size} examples: {WIDE.describe()}) in {data_dir}")
    _write_data(data_dir, size)
    with writing(fresh):
        if fresh.exists():  # what an interrupted or failed demo left: never a finished model
            shutil.rmtree(fresh)
    config = demo_config(data_dir, minutes, threads, target)
    log(f"2/3 training a Bahdanau model until {target:g}% of the validation dates come out "
        f"exactly right, {minutes:g} minutes at most (checkpoints in {fresh}, which becomes "
        f"{run_dir} when done)")
    started = time.monotonic()
    result = run_experiment(TranslationTask, config, fresh, progress=progress, log=log)
    spent = (time.monotonic() - started) / 60
    valid = result.best_metric if result.best_metric is not None else 0.0
    if result.stopped_by == "interrupted":  # the model trained before stays where it was
        log(f"reached {valid:.1f}% exact match on the validation dates after {spent:.1f} "
            f"minutes ({result.steps} updates), short of the {target:g}% target: training was "
            f"interrupted, so {run_dir} is unchanged and the unfinished run is in {fresh}; run "
            f"attnlab demo again")
        return DemoResult(None, 0, None, fresh, False, valid, result.steps, spent)
    _install(fresh, run_dir, log)
    reached = valid >= target
    if reached:
        log(f"reached the {target:g}% target ({valid:.1f}% exact match on the validation "
            f"dates) after {result.steps} updates in {spent:.1f} minutes")
    log(f"the model in {run_dir}: {describe_run(config)}")
    task = TranslationTask(config, run_dir, log=lambda _: None)
    RunDir(run_dir).load_checkpoint("best", task.model)
    test = read_split(config.data, "test")
    translations = translate(task.model, task.vocabs, [s for s, _ in test],
                             config.decode.greedy())
    correct = [t.text == ref for t, (_, ref) in zip(translations, test, strict=True)]
    log("3/3 held-out dates:")
    for (source, reference), translation in list(zip(test, translations, strict=True))[:10]:
        mark = "ok" if translation.text == reference else f"want {reference}"
        shown = source if source.isprintable() else repr(source)  # "\x00\x01", not a blank
        log(f"  {shown:<40} -> {translation.text}   {mark}")
    accuracy = 100.0 * sum(correct) / len(correct)
    not_dates = sum(reference == NOT_A_DATE for _, reference in test)
    log(f"exact-match accuracy on {len(test)} held-out examples ({not_dates} of them not "
        f"dates): {accuracy:.1f}%")
    heatmap = _draw_example(test, translations, directory / "alignment.png")
    log(f"alignment heatmap: {heatmap}")
    if not reached:  # last, where it is read: what went wrong and what to do
        log(f"reached {valid:.1f}% exact match on the validation dates after {spent:.1f} "
            f"minutes ({result.steps} updates), short of the {target:g}% target: the machine is "
            f"slower or busier than expected; run attnlab demo --minutes {2 * minutes:g}")
    return DemoResult(accuracy, len(test), heatmap, run_dir, reached, valid, result.steps, spent)


def _write_data(data_dir: Path, size: int) -> None:
    """The dates task in a new folder that then takes `data_dir`'s place (a run trained on the
    old data still loads: it keeps its own vocabularies)."""
    new, old = data_dir.with_name(data_dir.name + ".new"), data_dir.with_name(
        data_dir.name + ".old")
    with writing(data_dir):
        for leftover in (new, old):
            if leftover.exists():
                shutil.rmtree(leftover)
    write_dates(new, size=size, seed=1, world=WIDE)
    with writing(data_dir):
        if data_dir.exists():
            data_dir.rename(old)
        new.rename(data_dir)
        if old.exists():
            shutil.rmtree(old)


def _install(fresh: Path, run_dir: Path, log) -> None:
    """`fresh` takes `run_dir`'s place; a model already there is kept as run_dir.previous (one
    rename each way: `run_dir` is missing only between the two)."""
    previous = run_dir.with_name(run_dir.name + ".previous")
    with writing(run_dir):
        if run_dir.exists():
            if previous.exists():
                shutil.rmtree(previous)
            run_dir.rename(previous)
            log(f"the model trained before is kept in {previous}; the new one replaces it in "
                f"{run_dir}")
        fresh.rename(run_dir)


def _draw_example(test, translations, path: Path) -> Path:
    """The heatmap of the first test date written with letters (a month name), else the first."""
    index = next((i for i, (source, target) in enumerate(test)
                  if target != NOT_A_DATE and any(c.isalpha() for c in source)), 0)
    example = translations[index]
    source = [piece if piece.strip() else "␣" for piece in example.source_pieces]  # spaces
    return plot_alignment(example.attention, source, example.target_pieces, path,
                          title=f"{test[index][0]}  ->  {example.text}")
