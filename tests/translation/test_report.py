"""The run report and `evaluate` of a dates run laid out as the demo's (runs/demo/data beside
runs/demo/run): the data named by what it holds, the task's own metric shown, and no chart or
row for buckets that hold nothing (every date is one to nine words long)."""

import re
import warnings

import pytest

from attnlab.config import load_config
from attnlab.data import write_dates
from attnlab.train import run_experiment
from attnlab.translation import RunConfig, TranslationRun, TranslationTask
from attnlab.translation.evaluate import evaluate_run

pytestmark = pytest.mark.slow  # trains a tiny model (seconds)

MODEL = {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.0},
         "decoder": {"kind": "bahdanau", "embedding_dim": 8, "hidden_dim": 16, "dropout": 0.0,
                     "attention": {"score": "additive", "hidden_dim": 8}}}


@pytest.fixture(scope="module")
def demo_like_run(tmp_path_factory):
    """A dates run whose best checkpoint is chosen by BLEU, so only its data says it is one."""
    root = tmp_path_factory.mktemp("demo")
    write_dates(root / "data", size=300, seed=5)
    config = load_config({
        "data": {"dir": str(root / "data"), "train": "train", "valid": "val", "test": "test",
                 "src_lang": "src", "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False,
                 "max_len": 60, "batch_size": 32, "valid_sentences": 12},
        "model": MODEL,
        "train": {"lr": 0.01, "max_epochs": None, "max_steps": 10, "validate_every": 10,
                  "checkpoint_every": 10, "threads": 1, "device": "cpu", "tensorboard": False,
                  "early_stopping": {"metric": "bleu", "mode": "max"}},
        "loss": {"label_smoothing": 0.0},
        "decode": {"beam": 1, "max_len_ratio": 1.0, "max_len_extra": 4, "batch_size": 16},
    }, RunConfig)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # no CJK font here: not what is tested
        run_experiment(TranslationTask, config, root / "run", progress=False, log=lambda _: None)
    return TranslationRun.load(root / "run")


def section(page: str, anchor: str) -> str:
    found = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    assert found, f"no section {anchor}"
    return found.group(1)


def test_the_report_names_the_data_shows_exact_match_and_no_one_bar_chart(demo_like_run,
                                                                         tmp_path):
    page = demo_like_run.report(tmp_path / "report.html", samples=1).read_text(encoding="utf-8")
    title = re.search(r"<h1>(.*?)</h1>", page).group(1)
    assert title.endswith(", dates task, characters") and ", data," not in title
    scores = section(page, "scores")
    assert re.search(r"<td>exact match %</td><td class=\"num\">\d+\.\d\d</td>", scores)
    lengths = section(page, "bleu-by-source-length")
    assert "<img" not in lengths  # one bucket holds every date: nothing to compare
    assert re.findall(r"<tr><td>([^<]*)</td>", lengths) == ["0-9"]
    assert "5 empty buckets left out (10-19, 20-29, 30-39, 40-49, 50+)" in lengths
    assert "every sentence is in the 0-9 bucket, so there is no chart" in lengths


def test_evaluate_prints_exact_match_and_counts_the_empty_buckets(demo_like_run):
    data = demo_like_run.config.data
    sources = (demo_like_run.path.parent / "data" / "test.src").read_text().splitlines()[:20]
    references = (demo_like_run.path.parent / "data" / "test.tgt").read_text().splitlines()[:20]
    evaluation = evaluate_run(demo_like_run, sources, references)
    equal = sum(h == r for h, r in zip(evaluation.hypotheses, references, strict=True))
    assert evaluation.exact_match == pytest.approx(100 * equal / 20)
    assert evaluation.to_dict()["exact_match"] == evaluation.exact_match
    text = evaluation.format()
    assert f"exact match: {evaluation.exact_match:.2f}% ({equal} of 20 outputs" in text
    rows = text.split("BLEU by source length (words):\n")[1].splitlines()
    assert [row.split()[0] for row in rows[1:-1]] == ["0-9"] and "50+" in rows[-1]
    assert rows[-1].strip().startswith("(5 empty buckets left out") and data.vocab == "char"
