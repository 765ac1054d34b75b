"""`attnlab data multi30k-long` on a synthetic corpus and on the local Multi30k copy: one
summary line per split, a one-sentence error (exit 2) and nothing written when it refuses."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest

from attnlab.cli import main
from attnlab.data import read_lines
from shared_data import missing

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_ROOT = Path(os.environ.get("ATTNLAB_DATA", REPO_ROOT.parent / "shared" / "data"))
MULTI30K = DATA_ROOT / "multi30k"
SIZES = {"train": 50, "val": 12, "test_2016_flickr": 10}
# "train: 29,000 pairs -> 11,607 examples, source words median 27, max 73, 2,628 with >= 40
# words"
SUMMARY = re.compile(r"(\S+): ([\d,]+) pairs -> ([\d,]+) examples, source words median "
                     r"([\d.]+), max ([\d,]+), ([\d,]+) with >= 40 words")


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "multi30k"
    folder.mkdir()
    for split, count in SIZES.items():
        for language in ("de", "en"):
            lines = "".join(f"{language}{i} {'Wort ' * (i % 7)}.\n" for i in range(count))
            (folder / f"{split}.{language}.gz").write_bytes(gzip.compress(lines.encode()))
    return folder


def long_data(*args) -> int:
    return main(["data", "multi30k-long", *map(str, args)])


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_writes_the_set_and_prints_one_line_per_split(corpus, tmp_path, capsys):
    dest = tmp_path / "long"
    assert long_data("--from", corpus, "--dest", dest, "--seed", 7, "--max-join", 3) == 0
    out = capsys.readouterr().out.splitlines()
    meta = json.loads((dest / "meta.json").read_text(encoding="utf-8"))
    assert (meta["seed"], meta["max_join"], meta["pair"]) == (7, 3, "de-en")
    assert len(out) == len(SIZES) + 1 and out[-1].endswith(f"is in {dest}")
    for line, (split, count) in zip(out, SIZES.items(), strict=False):
        found = SUMMARY.fullmatch(line)
        assert found, line
        stats = meta["splits"][split]
        words = stats["source_words"]
        assert found.groups() == (split, str(count), str(stats["examples"]),
                                  f"{words['median']:g}", str(words["max"]),
                                  str(words["at_least_40"]))
        assert len(read_lines(dest / f"{split}.en.gz")) == stats["examples"] < count


def test_a_refusal_is_one_sentence_and_writes_nothing(corpus, tmp_path, capsys):
    (corpus / "val.en.gz").write_bytes(gzip.compress(b"only one\n"))
    dest = tmp_path / "long"
    assert long_data("--from", corpus, "--dest", dest) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"attnlab: error: {corpus / 'val.de.gz'} has 12 lines but "
                            f"{corpus / 'val.en.gz'} has 1: parallel files must have the same "
                            f"number of lines\n")
    assert not dest.exists()


@pytest.mark.parametrize(("option", "message"), [
    (["--max-join", "0"], "--max-join must be a whole number of at least 1, got 0"),
    (["--pair", "de-xx"], "bad language pair 'de-xx'"),
    (["--dest", "{corpus}"], "is the --from folder"),
])
def test_bad_options_are_refused(option, message, corpus, tmp_path, capsys):
    option = [text.format(corpus=corpus) for text in option]
    assert long_data("--from", corpus, "--dest", tmp_path / "long", *option) == 2
    err = capsys.readouterr().err
    assert err.startswith("attnlab: error: ") and err.count("\n") == 1 and message in err
    assert not (tmp_path / "long").exists()


@pytest.mark.skipif(not all((MULTI30K / f"{split}.{language}.gz").is_file()
                            for split in SIZES for language in ("de", "en")),
                    reason=missing("multi30k"))
def test_the_real_multi30k(tmp_path, capsys):
    dest = tmp_path / "long"
    assert long_data("--from", MULTI30K, "--dest", dest) == 0
    lines = {line.split(":")[0]: line for line in capsys.readouterr().out.splitlines()}
    test = SUMMARY.fullmatch(lines["test_2016_flickr"])
    assert test and number(test[2]) == 1000 and number(test[3]) < 1000 and number(test[5]) > 40
    assert SUMMARY.fullmatch(lines["train"])[2] == "29,000"
    joined = read_lines(dest / "test_2016_flickr.en.gz")
    assert " ".join(joined) == " ".join(read_lines(MULTI30K / "test_2016_flickr.en.gz"))
