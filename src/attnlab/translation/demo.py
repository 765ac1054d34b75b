"""`attnlab demo`: the dates task end to end in about two minutes on two CPU cores.

Generates the dates data, trains a Bahdanau model (character level), prints translations of
held-out dates, the exact-match accuracy on the test split, and writes an alignment heatmap.
"""

from __future__ import annotations

import shutil
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


def demo_config(data_dir: Path, minutes: float, threads: int | None) -> RunConfig:
    """The shipped dates-bahdanau config (attnlab config show dates-bahdanau), with a
    wall-clock budget."""
    return RunConfig(
        data=DataConfig(dir=str(data_dir), train="train", valid="val", test="test",
                        src_lang="src", tgt_lang="tgt", vocab="char", joint_vocab=False,
                        vocab_size=1000, max_len=60, batch_size=64, valid_sentences=300),
        model=ModelConfig(
            encoder=EncoderConfig(embedding_dim=32, hidden_dim=64, dropout=0.0),
            decoder=DecoderConfig(kind="bahdanau", embedding_dim=32, hidden_dim=128, dropout=0.0,
                                  attention=AttentionConfig("additive", hidden_dim=64)),
        ),
        train=TrainConfig(lr=3e-3, max_epochs=None, max_minutes=minutes, validate_every=300,
                          checkpoint_every=300, log_every=100, threads=threads,
                          early_stopping=EarlyStoppingConfig("exact_match", "max")),
        loss=LossConfig(label_smoothing=0.0),
        decode=DecodeConfig(beam=1, max_len_ratio=0.0, max_len_extra=12),
    )


@dataclass
class DemoResult:
    accuracy: float  # exact match on the held-out test split, percent
    test_size: int
    heatmap: Path
    run_dir: Path


def run_demo(directory: str | Path = "runs/demo", *, minutes: float = 2.0, size: int = 10000,
             threads: int | None = 2, progress: bool = True, log=print) -> DemoResult:
    directory = Path(directory)
    data_dir, run_dir = directory / "data", directory / "run"
    log(f"1/3 generating the dates task ({size} pairs) in {data_dir}")
    write_dates(data_dir, size=size, seed=1)
    if run_dir.exists():
        shutil.rmtree(run_dir)  # the demo always starts from scratch
    config = demo_config(data_dir, minutes, threads)
    log(f"2/3 training a Bahdanau model for {minutes:g} minutes (checkpoints in {run_dir})")
    run_experiment(TranslationTask, config, run_dir, progress=progress, log=log)
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
    return DemoResult(accuracy, len(test), heatmap, run_dir)


def _draw_example(test, translations, path: Path) -> Path:
    """The heatmap of the first test date written with letters (a month name), else the first."""
    index = next((i for i, (source, _) in enumerate(test) if any(c.isalpha() for c in source)), 0)
    example = translations[index]
    source = [piece if piece.strip() else "␣" for piece in example.source_pieces]  # spaces
    return plot_alignment(example.attention, source, example.target_pieces, path,
                          title=f"{test[index][0]}  ->  {example.text}")
