"""`attnlab evaluate` says in one line which gold alignments its AER uses, or why there are
none, before it decodes anything."""

import re
import shutil

import pytest

from attnlab.cli import main

from .conftest import train_run

CHOICE = re.compile(r"^AER(?: on:|: none) .*$", re.MULTILINE)


def choice(capsys, *args) -> str:
    """The one AER choice line of an evaluate run (which must also be the second line)."""
    assert main(["evaluate", *map(str, args)]) == 0
    out = capsys.readouterr().out
    (line,) = CHOICE.findall(out)
    assert out.splitlines()[1] == line
    return line


def test_dates_gold(dates_run, dates_data, capsys):
    line = choice(capsys, "--run", dates_run, "--beam", 1)
    assert line == f"AER on: dates task gold test.align ({dates_data / 'test.align'}), 100 pairs"


def test_rwth_gold_of_a_german_english_run(deen_run, rwth_root, monkeypatch, capsys):
    monkeypatch.setenv("ATTNLAB_DATA", str(rwth_root))
    line = choice(capsys, "--run", deen_run, "--beam", 1)
    assert line == f"AER on: RWTH de-en gold ({rwth_root / 'rwth-deen-gold'}), 3 pairs"


def test_both_gold_sets_asked_for_by_name(deen_run, deen_data, rwth_root, tmp_path, capsys):
    gold = tmp_path / "gold.talp"
    gold.write_text("1-1\n" * 6)
    line = choice(capsys, "--run", deen_run, "--beam", 1, "--src", deen_data / "val.de",
                  "--ref", deen_data / "val.en", "--align-gold", gold, "--align-format", "rwth",
                  "--rwth", rwth_root / "rwth-deen-gold")
    assert line == (f"AER on: gold.talp ({gold}), 6 pairs; RWTH de-en gold "
                    f"({rwth_root / 'rwth-deen-gold'}), 3 pairs")


@pytest.mark.parametrize(("args", "reason"), [
    ([], "no RWTH gold set: give --rwth DIR, or set ATTNLAB_DATA to a folder holding "
         "rwth-deen-gold/"),
    (["--no-rwth"], "--no-rwth, and no other gold set was given"),
])
def test_why_a_german_english_run_has_none(args, reason, deen_run, monkeypatch, capsys):
    monkeypatch.delenv("ATTNLAB_DATA", raising=False)
    assert choice(capsys, "--run", deen_run, "--beam", 1, *args) == f"AER: none ({reason})"


def test_why_pairs_without_gold_have_none(dates_run, dates_data, tmp_path, capsys):
    for name in ("test.src", "test.tgt"):  # the pairs without their .align
        shutil.copy(dates_data / name, tmp_path / name)
    line = choice(capsys, "--run", dates_run, "--beam", 1, "--src", tmp_path / "test.src",
                  "--ref", tmp_path / "test.tgt")
    assert line == (f"AER: none (no gold alignments for a src-tgt run (no test.align beside "
                    f"{tmp_path / 'test.src'}, not German-English); give --align-gold FILE or "
                    f"--rwth DIR)")


@pytest.mark.slow
def test_why_a_model_without_attention_has_none(deen_data, rwth_root, tmp_path, monkeypatch,
                                                capsys):
    monkeypatch.setenv("ATTNLAB_DATA", str(rwth_root))
    model = {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.0},
             "decoder": {"kind": "none", "embedding_dim": 8, "hidden_dim": 16, "dropout": 0.0}}
    data = {"dir": str(deen_data), "train": "train", "valid": "val", "test": "val",
            "src_lang": "de", "tgt_lang": "en", "vocab": "word", "joint_vocab": False,
            "vocab_size": 200, "max_len": 20, "batch_size": 3}
    run = train_run(tmp_path / "plain", data, model=model, max_steps=1, validate_every=None,
                    checkpoint_every=1)
    line = choice(capsys, "--run", run, "--beam", 1)
    assert line == "AER: none (this model has no attention, so its alignments cannot be scored)"
