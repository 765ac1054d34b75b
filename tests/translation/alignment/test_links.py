"""Links and their Pharaoh files: sure and possible links, 0- and 1-indexed files, errors that
name file and line, the RWTH gold file, and the one writer read back by the one reader."""

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.errors import DataError
from attnlab.translation.alignment import AlignmentSet, links_line, read_links
from shared_data import missing

REPO_ROOT = Path(__file__).resolve().parents[3]
DATA_ROOT = Path(os.environ.get("ATTNLAB_DATA", REPO_ROOT.parent / "shared" / "data"))
RWTH = DATA_ROOT / "rwth-deen-gold"

# Sentence: sure (0,0), (1,1); possible-only (1,2).
GOLD = AlignmentSet(sure={(0, 0), (1, 1)}, possible={(1, 2)})


def test_possible_includes_sure():
    assert GOLD.possible == {(0, 0), (1, 1), (1, 2)}
    assert GOLD.sure == {(0, 0), (1, 1)}


def test_read_links_sure_possible_and_indexing():
    zero = read_links(["0-0 1p2 1-1", "", "3-4 "])
    assert zero[0] == GOLD and zero[1] == AlignmentSet(set(), set())
    assert zero[2].sure == {(3, 4)}
    one = read_links(["1-1 2p3 2-2"], one_indexed=True)
    assert one == [GOLD]


def test_read_links_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.talp"
    path.write_text("1-1 2-2\n3x4\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.talp line 2: cannot read '3x4'"):
        read_links(path)
    with pytest.raises(DataError, match="<lines> line 1: link '0-1' has index 0"):
        read_links(["0-1"], one_indexed=True)
    with pytest.raises(DataError, match="cannot read '-1-2'"):
        read_links(["-1-2"])
    with pytest.raises(DataError, match="cannot read alignment file"):
        read_links(tmp_path / "missing.talp")


@pytest.mark.skipif(
    not (RWTH / "deen.talp").is_file(),
    reason=missing("rwth-deen-gold"),
)
def test_rwth_gold_file_reads_in_de_en_orientation():
    gold = read_links(RWTH / "deen.talp", one_indexed=True)
    assert len(gold) == 508
    assert sum(len(s.sure) for s in gold) > 0
    assert sum(len(s.possible - s.sure) for s in gold) > 0
    pairs = (RWTH / "test.de-en").read_text(encoding="utf-8").splitlines()
    assert len(pairs) == len(gold)
    for line, links in zip(pairs, gold, strict=True):
        german, english = (side.split() for side in line.split(" ||| "))
        # (source i, target j) with German the source: every index lies inside its sentence
        assert all(i < len(german) and j < len(english) for i, j in links.possible)


def test_links_line_sorts_by_target():
    assert links_line({(2, 0), (0, 1), (1, 1)}) == "2-0 0-1 1-1"
    assert links_line(set()) == ""


@given(st.sets(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=20))
def test_what_links_line_writes_read_links_reads_back(links):
    read, = read_links([links_line(links)])
    assert read.sure == links and read.possible == links
