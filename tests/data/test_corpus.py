import gzip

import pytest

from attnlab.data.corpus import (
    FilterReport,
    filter_pairs,
    read_lines,
    read_parallel,
    read_tsv,
)
from attnlab.errors import DataError

LINES = ["Ein Hund läuft.", "  leading spaces kept  ", "", "tab\tinside"]


def write(path, lines, *, ending="\n", gz=False):
    data = "".join(line + ending for line in lines).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_read_lines_plain_and_gzip(tmp_path, gz):
    path = write(tmp_path / ("a.txt.gz" if gz else "a.txt"), LINES, gz=gz)
    assert read_lines(path) == LINES


def test_read_lines_strips_crlf_and_bom_only(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"\xef\xbb\xbffirst\r\nmid\rdle \r\nlast")
    # A lone \r inside a line is data, not a line break: splitting there would misalign pairs.
    assert read_lines(path) == ["first", "mid\rdle ", "last"]


def test_empty_file_has_no_lines(tmp_path):
    assert read_lines(write(tmp_path / "e.txt", [])) == []


@pytest.mark.parametrize("gz", [False, True])
def test_invalid_utf8_names_file_line_and_column(tmp_path, gz):
    data = b"ok\nstill ok\nbad\xffbyte\n"
    path = tmp_path / ("train.de.gz" if gz else "train.de")
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(DataError) as caught:
        read_lines(path)
    assert str(caught.value) == f"{path} line 3: invalid UTF-8 (byte 0xff at column 4)"


def test_column_counts_characters_not_bytes(tmp_path):
    path = tmp_path / "x.txt"
    path.write_bytes("äö".encode() + b"\xfe")
    with pytest.raises(DataError, match=r"line 1: invalid UTF-8 \(byte 0xfe at column 3\)"):
        read_lines(path)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="data file not found: .*nothere.de"):
        read_lines(tmp_path / "nothere.de")


def test_damaged_gzip_is_a_data_error(tmp_path):
    path = tmp_path / "broken.gz"
    path.write_bytes(gzip.compress(b"hello\n" * 100)[:20])
    with pytest.raises(DataError, match="broken.gz: cannot read file"):
        read_lines(path)


def test_read_parallel_pairs_lines(tmp_path):
    src = write(tmp_path / "train.de", ["a", "b"])
    tgt = write(tmp_path / "train.en.gz", ["x", "y"], gz=True)
    assert read_parallel(src, tgt) == [("a", "x"), ("b", "y")]


def test_read_parallel_mismatch_names_both_files_and_counts(tmp_path):
    src = write(tmp_path / "train.de", ["a", "b", "c"])
    tgt = write(tmp_path / "train.en", ["x", "y"])
    with pytest.raises(DataError) as caught:
        read_parallel(src, tgt)
    assert str(caught.value) == (
        f"{src} has 3 lines but {tgt} has 2: parallel files must have the same number of lines"
    )


def test_read_tsv(tmp_path):
    path = write(tmp_path / "pairs.tsv", ["Hallo\tHello", "\tempty source"])
    assert read_tsv(path) == [("Hallo", "Hello"), ("", "empty source")]


@pytest.mark.parametrize("bad, tabs", [("no tab here", 0), ("a\tb\tc", 2)])
def test_read_tsv_needs_exactly_one_tab(tmp_path, bad, tabs):
    path = write(tmp_path / "pairs.tsv", ["a\tb", bad])
    with pytest.raises(DataError) as caught:
        read_tsv(path)
    assert str(caught.value) == (
        f"{path} line 2: expected one tab between source and target, found {tabs}"
    )


def test_filter_counts_every_dropped_pair():
    pairs = [
        ("a b", "c"),            # kept
        ("", "x"),               # empty source
        ("y", "   "),            # whitespace-only target
        ("one two three", "z"),  # too long (3 > 2)
        ("p", "q r"),            # kept (2 <= 2)
        ("s", "1 2 3 4"),        # too long target
    ]
    kept, indices, report = filter_pairs(pairs, max_len=2)
    assert kept == [("a b", "c"), ("p", "q r")]
    assert indices == [0, 4]
    assert (report.total, report.kept, report.empty, report.too_long) == (6, 2, 2, 2)
    assert report.kept + report.empty + report.too_long == report.total
    assert report.dropped_lines == [(2, "empty"), (3, "empty"), (4, "too long"), (6, "too long")]
    assert report.summary() == (
        "kept 2 of 6 pairs (2 empty, 2 longer than 2 tokens; first at lines 2, 3, 4, 6)"
    )


def test_filter_uses_length_fn_and_no_limit_keeps_long_pairs():
    pairs = [("abcdef", "ab"), ("abc", "abc")]
    kept, _, report = filter_pairs(pairs, max_len=4, length_fn=len)
    assert kept == [("abc", "abc")] and report.too_long == 1
    kept, _, report = filter_pairs(pairs)
    assert kept == pairs and report.summary() == "kept 2 of 2 pairs"


def test_filter_summary_elides_after_first_lines():
    pairs = [("", "x")] * 8
    _, _, report = filter_pairs(pairs, max_len=10)
    assert len(report.dropped_lines) == 5
    assert report.summary().endswith("first at lines 1, 2, 3, 4, 5, ...)")
    assert isinstance(report, FilterReport)
