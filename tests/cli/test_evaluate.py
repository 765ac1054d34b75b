"""`attnlab evaluate`: sacreBLEU scores with signatures, BLEU by length, AER on dates and RWTH
gold; and the pieces it is built from."""

import json
import re

import numpy as np
import pytest

import attnlab
from attnlab.cli import main
from attnlab.translation import LabelledAttention, TranslationRun
from attnlab.translation.alignment import (
    alignment_weights,
    argmax_links,
    environment_rwth_dir,
    forced_alignment,
    rwth_gold,
    rwth_gold_for_run,
)

AER_LINE = re.compile(r"^AER (\d\.\d{4})  (.*)$", re.MULTILINE)


def evaluate(capsys, *args):
    assert main(["evaluate", *map(str, args)]) == 0
    return capsys.readouterr().out


def read(path):
    return path.read_text(encoding="utf-8").splitlines()


def aer_recomputed(run_dir, sources, targets, gold_lines, *, characters=False,
                   one_indexed=False):
    """(AER, pairs scored) recomputed here, apart from the library's links and AER: forced-decode
    each reference, link each target unit (word, or character) to its most attended source unit
    ("</s>" row and column left out), read the gold's Pharaoh links by hand ("i-j" sure, "ipj"
    possible), and apply Och & Ney's definition, each count summed over the pairs. A pair whose
    units do not match the gold's is left out, as evaluate leaves it out."""
    run = TranslationRun.load(run_dir, device="cpu")
    forced = forced_alignment(run.model, run.vocabs, list(sources), list(targets))
    hits = size = pairs = 0
    for alignment, source, target, line in zip(forced, sources, targets, gold_lines,
                                               strict=True):
        weights = np.asarray(alignment.attention if characters else alignment.word_attention)
        weights = weights[:-1, :-1]
        units = (len(target), len(source)) if characters else (len(target.split()),
                                                               len(source.split()))
        if weights.shape != units:
            continue
        predicted = {(int(row.argmax()), t) for t, row in enumerate(weights)}
        sure, possible = set(), set()
        for link in line.split():
            kind = "-" if "-" in link else "p"
            i, j = (int(index) - one_indexed for index in link.split(kind))
            (sure if kind == "-" else possible).add((i, j))
        possible |= sure
        hits += len(predicted & sure) + len(predicted & possible)
        size += len(predicted) + len(sure)
        pairs += 1
    return 1 - hits / size, pairs


def test_dates_scores_buckets_and_aer(dates_run, dates_data, tmp_path, capsys):
    plot, results = tmp_path / "buckets.png", tmp_path / "results.json"
    out = evaluate(capsys, "--run", dates_run, "--src", dates_data / "test.src", "--ref",
                   dates_data / "test.tgt", "--bucket-plot", plot, "--output", results,
                   "--buckets", "0,2,4")
    assert "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:" in out  # BLEU signature
    assert "chrF" in out and "case:lc" in out
    assert re.search(r"source words\s+sentences\s+BLEU\n\s+0-1\s+\d+", out)
    assert re.search(r"^\s+4\+\s+\d+", out, re.MULTILINE)
    (aer_value, what), = AER_LINE.findall(out)
    sources, targets = (read(dates_data / f"test.{side}") for side in ("src", "tgt"))
    expected, pairs = aer_recomputed(dates_run, sources, targets, read(dates_data / "test.align"),
                                     characters=True)
    assert aer_value == f"{expected:.4f}" and f"{pairs} pairs," in what
    assert "dates task gold" in what and "test.align" in what and "characters" in what
    assert plot.read_bytes().startswith(b"\x89PNG")
    summary = json.loads(results.read_text())
    assert summary["scores"]["sentences"] == 100
    assert sum(row["count"] for row in summary["buckets"]) == 100
    assert summary["buckets"][-1]["hi"] is None


def test_default_is_the_test_split(dates_run, capsys):
    out = evaluate(capsys, "--run", dates_run, "--beam", 1, "--no-rwth")
    assert "test.src" in out and "beam 1" in out and "on 100 sentences" in out
    assert len(AER_LINE.findall(out)) == 1


def test_rwth_aer_found_through_attnlab_data(deen_run, deen_data, rwth_root, monkeypatch,
                                             capsys):
    monkeypatch.setenv("ATTNLAB_DATA", str(rwth_root))
    out = evaluate(capsys, "--run", deen_run, "--src", deen_data / "val.de", "--ref",
                   deen_data / "val.en")
    assert "last checkpoint" in out  # this run has no `best`
    (aer_value, what), = AER_LINE.findall(out)
    gold = rwth_root / "rwth-deen-gold"
    sources, targets = zip(*(line.split(" ||| ") for line in read(gold / "test.de-en")),
                           strict=True)
    expected, pairs = aer_recomputed(deen_run, sources, targets, read(gold / "deen.talp"),
                                     one_indexed=True)
    assert aer_value == f"{expected:.4f}" and pairs == 3
    assert "RWTH de-en gold" in what and "3 pairs," in what and "words" in what


def test_no_rwth_gold_without_attnlab_data(deen_run, deen_data, rwth_root, tmp_path,
                                           monkeypatch, capsys):
    # A gold set beside a (pretend) repository must not be found: only --rwth or ATTNLAB_DATA.
    repository = tmp_path / "repo"
    (repository / "src" / "attnlab").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(rwth_root, target_is_directory=True)
    monkeypatch.setattr(attnlab, "__file__", str(repository / "src" / "attnlab" / "__init__.py"))
    monkeypatch.delenv("ATTNLAB_DATA", raising=False)
    assert environment_rwth_dir() is None
    assert rwth_gold_for_run(TranslationRun.load(deen_run, device="cpu")) is None
    out = evaluate(capsys, "--run", deen_run, "--src", deen_data / "val.de", "--ref",
                   deen_data / "val.en")
    assert not AER_LINE.findall(out)


def test_attnlab_data_without_the_gold_folder(deen_run, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_DATA", str(tmp_path))
    assert environment_rwth_dir() is None
    assert rwth_gold_for_run(TranslationRun.load(deen_run, device="cpu")) is None


def test_rwth_explicit_dir_and_align_gold(deen_run, deen_data, rwth_root, tmp_path, capsys):
    gold = tmp_path / "gold.talp"
    gold.write_text("1-1\n" * 6)
    out = evaluate(capsys, "--run", deen_run, "--src", deen_data / "val.de", "--ref",
                   deen_data / "val.en", "--rwth", rwth_root / "rwth-deen-gold",
                   "--align-gold", gold, "--align-format", "rwth")
    assert len(AER_LINE.findall(out)) == 2


def test_missing_rwth_dir_is_one_line(deen_run, tmp_path, capsys):
    assert main(["evaluate", "--run", str(deen_run), "--rwth", str(tmp_path / "nowhere")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "test.de-en" in error


def test_rwth_gold_is_read_one_indexed(rwth_root):
    gold = rwth_gold(rwth_root / "rwth-deen-gold")
    assert gold.sources[0].startswith("Zwei Männer") and gold.targets[0].startswith("Two men")
    assert (0, 0) in gold.alignments[0].sure
    assert (1, 1) in gold.alignments[1].possible and (1, 1) not in gold.alignments[1].sure
    reverse = rwth_gold(rwth_root / "rwth-deen-gold", reverse=True)
    assert reverse.sources[0].startswith("Two men") and (3, 1) in reverse.alignments[1].sure


def test_alignment_leaves_out_end_of_sentence():
    # target words: "a", "b", "</s>"; source words "x", "y", "</s>"
    word_attention = np.array([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.0, 0.0, 1.0]])
    labelled = LabelledAttention(["x", "y", "</s>"], ["a", "b", "</s>"], word_attention,
                                 ["x", "y", "</s>"], ["a", "b", "</s>"], word_attention)
    assert alignment_weights(labelled).shape == (2, 2)
    assert argmax_links(labelled) == {(1, 0), (0, 1)}
    unfinished = LabelledAttention(["x", "</s>"], ["a"], np.ones((1, 2)) / 2, ["x", "</s>"],
                                   ["a"], np.ones((1, 2)) / 2)
    assert argmax_links(unfinished, characters=True) == {(0, 0)}


def test_src_without_ref_is_refused(dates_run, dates_data, capsys):
    assert main(["evaluate", "--run", str(dates_run), "--src", str(dates_data / "test.src")]) == 2
    assert "both --src and --ref" in capsys.readouterr().err


@pytest.mark.parametrize("edges", ["5,10", "0,10,10", "a,b"])
def test_bad_bucket_edges(edges, dates_run, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--run", str(dates_run), "--buckets", edges])
    assert exit_info.value.code == 2


def test_a_location_model_is_scored_on_the_gold_pairs_it_can_address(tmp_path, rwth_root,
                                                                       capsys):
    from .conftest import DE_EN, train_run

    # The location score's softmax covers max_len source positions: 6 here, so the second
    # and third gold pairs (8 and 6 words, and "</s>") are beyond it: left out, and said.
    short = [(de, en) for de, en in DE_EN if len(de.split()) < 6]
    for split in ("train", "val"):
        for index, lang in enumerate(("de", "en")):
            (tmp_path / f"{split}.{lang}").write_text(
                "".join(pair[index] + "\n" for pair in short), encoding="utf-8")
    data = {"dir": str(tmp_path), "train": "train", "valid": "val", "test": "val",
            "src_lang": "de", "tgt_lang": "en", "vocab": "word", "joint_vocab": False,
            "vocab_size": 200, "max_len": 20, "batch_size": 3}
    model = {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.0},
             "decoder": {"kind": "luong", "embedding_dim": 8, "hidden_dim": 16,
                         "dropout": 0.0, "attention": {"score": "location", "max_len": 6}}}
    run = train_run(tmp_path / "location", data, model=model, max_steps=2,
                    validate_every=None, checkpoint_every=2)
    assert main(["evaluate", "--run", str(run), "--rwth",
                 str(rwth_root / "rwth-deen-gold")]) == 0
    said = capsys.readouterr().out
    assert "2 pairs longer than max_len=6 left out: 1 pairs" in said
