"""benchmarks/local_p_probe.py, the tool behind docs/local-p.md, still reads a trained local-p
model: it broke silently when local attention began returning window weights (issue 25), and
nothing ran it until a rerun of the docs' numbers did."""

import importlib.util
from pathlib import Path

import pytest

from attnlab.config import load_config
from attnlab.train import run_experiment
from attnlab.translation import RunConfig, TranslationTask

pytestmark = pytest.mark.slow  # the runs fixture trains local-p models

PROBE = Path(__file__).resolve().parents[2] / "benchmarks" / "local_p_probe.py"
PAIRS = [("Zwei Männer spielen Fußball .", "Two men play football ."),
         ("Ein Mann spielt Gitarre .", "A man plays guitar ."),
         ("Kinder spielen im Park .", "Children play in the park ."),
         ("Die Frau läuft .", "The woman walks .")]


def probe_module():
    spec = importlib.util.spec_from_file_location("local_p_probe", PROBE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train(folder: Path, run: Path, mechanism: str) -> None:
    attention = {"score": "general", "mechanism": mechanism}
    if mechanism == "local-p":
        attention["window"] = 2
    config = load_config({
        "data": {"dir": str(folder), "train": "train", "valid": "val", "test": "val",
                 "src_lang": "de", "tgt_lang": "en", "vocab": "word", "joint_vocab": False,
                 "vocab_size": 100, "max_len": 20, "batch_size": 2},
        "model": {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.0},
                  "decoder": {"kind": "luong", "embedding_dim": 8, "hidden_dim": 16,
                              "dropout": 0.0, "attention": attention}},
        "train": {"lr": 0.05, "max_steps": 4, "max_epochs": None, "validate_every": None,
                  "checkpoint_every": 4, "log_every": 2, "threads": 1, "device": "cpu",
                  "tensorboard": False},
        "loss": {"label_smoothing": 0.0}}, RunConfig)
    run_experiment(TranslationTask, config, run, progress=False, log=lambda _: None)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("probe")
    for split in ("train", "val"):
        for index, lang in enumerate(("de", "en")):
            (folder / f"{split}.{lang}").write_text(
                "".join(pair[index] + "\n" for pair in PAIRS), encoding="utf-8")
    train(folder, folder / "local-p", "local-p")
    train(folder, folder / "global", "global")
    return folder


def test_the_probe_measures_a_trained_local_p_model(runs, capsys):
    probe_module().main([str(runs / "local-p"), "--global", str(runs / "global"),
                         "--parts", "ad", "--batches", "1"])
    out = capsys.readouterr().out
    assert "4 val pairs; reference: argmax of the global model's forced attention" in out
    assert "(a) predicted centres p_t" in out and "trained p_t" in out
    assert "oracle" in out   # (d): the centre replaced at evaluation


def test_the_probe_follows_several_checkpoints(runs, capsys):
    probe_module().main([str(runs / "local-p"), str(runs / "local-p"),
                         "--global", str(runs / "global")])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:3] == ["step", "gate", "mean"]
    rows = [line.split() for line in lines[2:]]
    assert len(rows) == 2 and all(row[0] == "4" for row in rows)
    gate = float(rows[0][1])
    assert 0.0 <= gate <= 1.0
