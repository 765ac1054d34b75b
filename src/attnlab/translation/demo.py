"""`attnlab demo`: the dates task end to end in a few minutes on two CPU cores.

Generates the dates data, trains a Bahdanau model (character level) until its exact match on
the validation dates reaches a target (99%) or a time cap runs out, prints translations of
held-out dates, the exact-match accuracy on the test split, and writes an alignment heatmap.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from attnlab.data import write_dates
from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig
from attnlab.train import run_experiment
from attnlab.train.checkpoint import RunDir
from attnlab.train.config import EarlyStoppingConfig, TrainConfig
from attnlab.viz import plot_alignment

from .config import DataConfig, DecodeConfig, LossConfig, RunConfig
from .corpus import read_split
from .task import TranslationTask
from .translate import translate

TARGET = 99.0          # validation exact match (percent) at which training stops
MINUTES = 5.0          # the time cap
VALIDATE_EVERY = 100   # updates; a validation (300 dates, checkpoints) costs about 10% of them
THREADS = 1            # torch threads: 2 are 1.25x faster on two idle cores, but 2.5-15x
                       # slower than 1 when other programs use the cores


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
    accuracy: float  # exact match on the held-out test split, percent
    test_size: int
    heatmap: Path
    run_dir: Path
    reached: bool           # the validation exact match reached the target
    valid_accuracy: float   # the best validation exact match, percent (the model tested)
    updates: int
    minutes: float          # training time, validations included


def run_demo(directory: str | Path = "runs/demo", *, minutes: float = MINUTES,
             size: int = 10000, threads: int | None = THREADS, target: float = TARGET,
             progress: bool = True, log=print) -> DemoResult:
    """Train until the validation exact match reaches `target` percent or `minutes` run out,
    then test the best model; `DemoResult.reached` says which (the CLI exits 1 when short)."""
    directory = Path(directory)
    data_dir, run_dir = directory / "data", directory / "run"
    log(f"1/3 generating the dates task ({size} pairs) in {data_dir}")
    write_dates(data_dir, size=size, seed=1)
    if run_dir.exists():
        shutil.rmtree(run_dir)  # the demo always starts from scratch
    config = demo_config(data_dir, minutes, threads, target)
    log(f"2/3 training a Bahdanau model until {target:g}% of the validation dates come out "
        f"exactly right, {minutes:g} minutes at most (checkpoints in {run_dir})")
    started = time.monotonic()
    result = run_experiment(TranslationTask, config, run_dir, progress=progress, log=log)
    spent = (time.monotonic() - started) / 60
    valid = result.best_metric if result.best_metric is not None else 0.0
    reached = valid >= target
    if reached:
        log(f"reached the {target:g}% target ({valid:.1f}% exact match on the validation "
            f"dates) after {result.steps} updates in {spent:.1f} minutes")
    task = TranslationTask(config, run_dir, log=lambda _: None)
    RunDir(run_dir).load_checkpoint("best", task.model)
    test = read_split(config.data, "test")
    translations = translate(task.model, task.vocabs, [s for s, _ in test],
                             config.decode.greedy())
    correct = [t.text == ref for t, (_, ref) in zip(translations, test, strict=True)]
    log("3/3 held-out dates:")
    for (source, reference), translation in list(zip(test, translations, strict=True))[:10]:
        mark = "ok" if translation.text == reference else f"want {reference}"
        log(f"  {source:<40} -> {translation.text}   {mark}")
    accuracy = 100.0 * sum(correct) / len(correct)
    log(f"exact-match accuracy on {len(test)} held-out dates: {accuracy:.1f}%")
    heatmap = _draw_example(test, translations, directory / "alignment.png")
    log(f"alignment heatmap: {heatmap}")
    if not reached:  # last, where it is read: what went wrong and what to do
        why = ("training was interrupted; run attnlab demo again"
               if result.stopped_by == "interrupted" else "the machine is slower or busier "
               f"than expected; run attnlab demo --minutes {2 * minutes:g}")
        log(f"reached {valid:.1f}% exact match on the validation dates after {spent:.1f} "
            f"minutes ({result.steps} updates), short of the {target:g}% target: {why}")
    return DemoResult(accuracy, len(test), heatmap, run_dir, reached, valid, result.steps, spent)


def _draw_example(test, translations, path: Path) -> Path:
    """The heatmap of the first test date written with letters (a month name), else the first."""
    index = next((i for i, (source, _) in enumerate(test) if any(c.isalpha() for c in source)), 0)
    example = translations[index]
    source = [piece if piece.strip() else "␣" for piece in example.source_pieces]  # spaces
    return plot_alignment(example.attention, source, example.target_pieces, path,
                          title=f"{test[index][0]}  ->  {example.text}")
