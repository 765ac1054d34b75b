"""The Multi30k length-stress set on tiny synthetic corpora: every example is the exact join of
consecutive originals, the same k on both sides, reproducible by seed, and every refusal comes
before anything is written."""

from __future__ import annotations

import errno
import gzip
import json
import os
import re
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.data import make_long_multi30k, read_lines
from attnlab.data.multi30k_long import group_sizes, join_pairs, split_rng
from attnlab.errors import ConfigError, DataError, WriteError

SIZES = {"train": 60, "val": 13, "test_2016_flickr": 11}


def sentences(split: str, language: str, count: int) -> list[str]:
    """Lines with a unique id token ("de7") and 1..9 words, an umlaut in German."""
    word = "Männer" if language == "de" else "men"
    return [f"{language}{i}" + f" {word}" * (i % 9) for i in range(count)]


def write_corpus(folder, sizes=SIZES, languages=("de", "en", "fr"), gz=True):
    folder.mkdir(parents=True, exist_ok=True)
    for split, count in sizes.items():
        for language in languages:
            text = "".join(line + "\n" for line in sentences(split, language, count))
            if gz:
                with gzip.open(folder / f"{split}.{language}.gz", "wt", encoding="utf-8") as out:
                    out.write(text)
            else:
                (folder / f"{split}.{language}").write_text(text, encoding="utf-8")
    (folder / "README.md").write_text("not data\n", encoding="utf-8")
    return folder


@pytest.fixture
def source(tmp_path):
    return write_corpus(tmp_path / "multi30k")


def ids(text: str, language: str) -> list[int]:
    return [int(number) for number in re.findall(rf"\b{language}(\d+)\b", text)]


def files_in(folder):
    return sorted(path.name for path in folder.iterdir())


def test_every_example_joins_consecutive_originals_with_one_k(source, tmp_path):
    dest = tmp_path / "long"
    make_long_multi30k(source, dest, seed=3, max_join=4)
    for split, count in SIZES.items():
        de, en = read_lines(dest / f"{split}.de.gz"), read_lines(dest / f"{split}.en.gz")
        originals = {"de": sentences(split, "de", count), "en": sentences(split, "en", count)}
        assert len(de) == len(en) < count
        assert " ".join(de) == " ".join(originals["de"])
        assert " ".join(en) == " ".join(originals["en"])
        start = 0
        for source_line, target_line in zip(de, en, strict=True):
            k = len(ids(source_line, "de"))
            assert 1 <= k <= 4
            assert ids(source_line, "de") == ids(target_line, "en") == list(range(start,
                                                                                  start + k))
            assert source_line == " ".join(originals["de"][start:start + k])
            assert target_line == " ".join(originals["en"][start:start + k])
            start += k
        assert start == count


def test_k_covers_one_to_max_join(source, tmp_path):
    stats = make_long_multi30k(source, tmp_path / "long", seed=1, max_join=3)
    assert stats["train"]["joins"].keys() == {"1", "2", "3"}
    for split, count in SIZES.items():
        joins = {int(k): n for k, n in stats[split]["joins"].items()}
        assert sum(k * n for k, n in joins.items()) == count == stats[split]["pairs"]
        assert sum(joins.values()) == stats[split]["examples"]


def test_max_join_one_copies_the_corpus(source, tmp_path):
    make_long_multi30k(source, tmp_path / "long", max_join=1)
    assert read_lines(tmp_path / "long" / "val.en.gz") == sentences("val", "en", 13)


def test_same_seed_same_bytes_other_seed_other_joins(source, tmp_path):
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        make_long_multi30k(source, tmp_path / name, seed=seed)
    for name in files_in(tmp_path / "a"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (read_lines(tmp_path / "a" / "train.de.gz")
            != read_lines(tmp_path / "c" / "train.de.gz"))


def test_a_split_does_not_depend_on_the_others(source, tmp_path):
    make_long_multi30k(source, tmp_path / "all")
    alone = write_corpus(tmp_path / "train-only", {"train": SIZES["train"]})
    make_long_multi30k(alone, tmp_path / "one")
    assert files_in(tmp_path / "one") == ["meta.json", "train.de.gz", "train.en.gz"]
    assert ((tmp_path / "one" / "train.en.gz").read_bytes()
            == (tmp_path / "all" / "train.en.gz").read_bytes())


def test_splits_draw_different_ks_under_one_seed():
    val, test = (group_sizes(100, split_rng(1, split), 4) for split in ("val", "test"))
    assert val != test and val == group_sizes(100, split_rng(1, "val"), 4)


def test_meta_json_records_the_run_and_true_lengths(source, tmp_path):
    dest = tmp_path / "long"
    stats = make_long_multi30k(source, dest, pair=("en", "de"), seed=2, max_join=5)
    meta = json.loads((dest / "meta.json").read_text(encoding="utf-8"))
    assert (meta["seed"], meta["max_join"], meta["pair"]) == (2, 5, "en-de")
    assert meta["source"] == str(source.resolve())
    assert meta["splits"] == stats and list(stats) == list(SIZES)
    assert files_in(dest) == sorted(["meta.json", *(f"{split}.{language}.gz" for split in SIZES
                                                    for language in ("de", "en"))])
    for split, count in SIZES.items():
        lengths = [len(line.split()) for line in read_lines(dest / f"{split}.en.gz")]
        assert stats[split]["pairs"] == count and stats[split]["examples"] == len(lengths)
        assert stats[split]["source_words"] == {
            "min": min(lengths), "median": statistics.median(lengths), "max": max(lengths),
            "at_least_20": sum(n >= 20 for n in lengths),
            "at_least_40": sum(n >= 40 for n in lengths)}
    assert stats["train"]["source_words"]["at_least_20"] > 0  # up to 5 joins of 1..9 words


def test_plain_files_and_other_splits_are_found(tmp_path):
    source = write_corpus(tmp_path / "plain", {"train": 9, "test_2017_mscoco": 7, "dev": 0},
                          languages=("de", "en"), gz=False)
    stats = make_long_multi30k(source, tmp_path / "long")
    assert list(stats) == ["train", "dev", "test_2017_mscoco"]  # Multi30k's first, then by name
    assert " ".join(read_lines(tmp_path / "long" / "test_2017_mscoco.de.gz")) == " ".join(
        sentences("test_2017_mscoco", "de", 7))
    assert stats["dev"]["examples"] == 0 and stats["dev"]["source_words"]["max"] is None


def test_mismatched_line_counts_are_refused_before_writing(source, tmp_path):
    with gzip.open(source / "test_2016_flickr.en.gz", "wt", encoding="utf-8") as out:
        out.write("one\ntwo\n")
    dest = tmp_path / "long"
    with pytest.raises(DataError) as error:
        make_long_multi30k(source, dest)
    assert str(error.value) == (
        f"{source / 'test_2016_flickr.de.gz'} has 11 lines but "
        f"{source / 'test_2016_flickr.en.gz'} has 2: parallel files must have the same number "
        f"of lines")
    assert not dest.exists()


def test_a_failed_check_leaves_an_old_dest_untouched(source, tmp_path):
    dest = tmp_path / "long"
    make_long_multi30k(source, dest, seed=1)
    before = {name: (dest / name).read_bytes() for name in files_in(dest)}
    (source / "val.en.gz").write_bytes(gzip.compress(b"ok\n\xff bad\n"))
    with pytest.raises(DataError, match=r"val\.en\.gz line 2: invalid UTF-8"):
        make_long_multi30k(source, dest, seed=2)
    assert {name: (dest / name).read_bytes() for name in files_in(dest)} == before


@pytest.mark.parametrize("old_dest", [False, True])
def test_a_failed_write_leaves_no_new_file(old_dest, source, tmp_path, monkeypatch):
    dest = tmp_path / "long"
    if old_dest:
        make_long_multi30k(source, dest, seed=1)
    before = {name: (dest / name).read_bytes() for name in files_in(dest)} if old_dest else None
    calls = []

    def fsync(descriptor):
        calls.append(descriptor)
        if len(calls) == 3:  # two files written, the third hits a full disk
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(WriteError, match=f"cannot write {dest / 'val.de.gz'}: no space left"):
        make_long_multi30k(source, dest, seed=2)
    if old_dest:  # no hidden staging folder left, no file half new
        assert {name: (dest / name).read_bytes() for name in files_in(dest)} == before
    else:
        assert not dest.exists()


def test_missing_side_and_doubled_files_are_refused(source, tmp_path):
    (source / "val.en.gz").unlink()
    with pytest.raises(DataError, match=r"val\.de\.gz is there but not its en side val\.en\.gz"):
        make_long_multi30k(source, tmp_path / "long")
    (source / "val.de.gz").unlink()
    (source / "train.de").write_text("x\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"both train\.de(\.gz)? and train\.de(\.gz)? are there"):
        make_long_multi30k(source, tmp_path / "long")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no de/en files named <split>.<language>.gz"):
        make_long_multi30k(empty, tmp_path / "long")
    with pytest.raises(DataError, match="--from .*nowhere: no such directory"):
        make_long_multi30k(tmp_path / "nowhere", tmp_path / "long")
    assert not (tmp_path / "long").exists()


def test_bad_destinations_and_options_are_refused(source, tmp_path):
    before = {name: (source / name).read_bytes() for name in files_in(source)}
    taken = tmp_path / "taken.txt"
    taken.write_text("mine\n", encoding="utf-8")
    for dest, message in ((taken, "is a file, not a folder"), (taken / "sub", "is a file"),
                          (source, "is the --from folder")):
        with pytest.raises(WriteError, match=message):
            make_long_multi30k(source, dest)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "val.de.gz").symlink_to(source / "val.de.gz")
    with pytest.raises(WriteError, match="is the same file as --from file"):
        make_long_multi30k(source, linked)
    with pytest.raises(ConfigError, match="--max-join"):
        make_long_multi30k(source, tmp_path / "x", max_join=0)
    with pytest.raises(ConfigError, match="bad language pair"):
        make_long_multi30k(source, tmp_path / "x", pair=("de", "de"))
    assert taken.read_text(encoding="utf-8") == "mine\n" and not (tmp_path / "x").exists()
    assert {name: (source / name).read_bytes() for name in files_in(source)} == before


@settings(max_examples=40, deadline=None)
@given(count=st.integers(0, 60), max_join=st.integers(1, 6), seed=st.integers(0, 2**32),
       words=st.lists(st.text(alphabet="aä ß.", max_size=8), min_size=60, max_size=60))
def test_join_invariant(count, max_join, seed, words):
    pairs = [(f"{word}s{i}", f"t{i}{word}") for i, word in enumerate(words[:count])]
    sizes = group_sizes(count, split_rng(seed, "train"), max_join)
    assert sum(sizes) == count and all(1 <= k <= max_join for k in sizes)
    examples = join_pairs(pairs, sizes)
    for side in (0, 1):
        assert " ".join(e[side] for e in examples) == " ".join(p[side] for p in pairs)
    starts = np.cumsum([0, *sizes])
    for example, start, k in zip(examples, starts[:-1], sizes, strict=True):
        assert example == tuple(" ".join(p[side] for p in pairs[start:start + k])
                                for side in (0, 1))
