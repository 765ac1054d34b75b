"""Every gold reader (a links file, the RWTH set, the dates task's gold, evaluate's choice) refuses
a link outside its sentence pair in one sentence naming the file and the line, instead of scoring
it as a miss of the model."""

from dataclasses import dataclass

import pytest

from attnlab.data import write_dates
from attnlab.errors import DataError
from attnlab.translation.alignment import choose_golds, dates_gold, gold_from_file, rwth_gold

SOURCES = ["ein Mann spielt Gitarre .", "zwei Hunde laufen"]           # 5 and 3 words
TARGETS = ["a man is playing a guitar .", "two dogs run"]              # 7 and 3 words


@dataclass
class Run:
    """What a gold reader asks of a run (AlignableRun): attention, and its unit."""

    character_level: bool = False
    has_attention: bool = True


def links_file(tmp_path, *lines):
    path = tmp_path / "gold.links"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("line, says", [
    ("99-99", "line 1: link 99-99 is outside its sentence pair of 5 x 7 words (source x target)"),
    ("0-0 5-1", "line 1: link 5-1 is outside its sentence pair of 5 x 7 words"),
    ("0-0 4-7", "line 1: link 4-7 is outside its sentence pair of 5 x 7 words"),
    ("0-0 4p9", "line 1: link 4p9 is outside its sentence pair of 5 x 7 words"),
])
def test_a_link_outside_its_sentence_names_the_file_and_line(tmp_path, line, says):
    path = links_file(tmp_path, line, "0-0")
    with pytest.raises(DataError) as error:
        gold_from_file(path, SOURCES, TARGETS, characters=False)
    assert str(error.value).startswith(f"{path} {says}")
    assert gold_from_file(links_file(tmp_path, "4-6 0p0", "2-2"), SOURCES, TARGETS,
                          characters=False).alignments[0].sure == {(4, 6)}


def test_the_second_line_and_a_one_indexed_file_are_named_as_written(tmp_path):
    path = links_file(tmp_path, "1-1", "4-3")
    with pytest.raises(DataError, match=r"gold.links line 2: link 4-3 is outside its sentence "
                                        r"pair of 3 x 3 words"):
        gold_from_file(path, SOURCES, TARGETS, one_indexed=True, characters=False)
    gold = gold_from_file(links_file(tmp_path, "5-7", "3-3"), SOURCES, TARGETS,
                          one_indexed=True, characters=False)
    assert gold.alignments[1].sure == {(2, 2)}


def test_a_file_of_fewer_lines_than_pairs_is_named(tmp_path):
    path = links_file(tmp_path, "0-0")
    with pytest.raises(DataError, match=rf"^{path} has 1 lines of links for 2 sentence pairs"):
        gold_from_file(path, SOURCES, TARGETS)


def test_without_a_unit_a_link_is_checked_against_the_characters(tmp_path):
    # 12 is past the 5 words but inside the 25 characters: the caller did not say which
    gold_from_file(links_file(tmp_path, "12-0", "0-0"), SOURCES, TARGETS)
    with pytest.raises(DataError, match="link 99-99 is outside its sentence pair of 25 x 27 "
                                        "characters"):
        gold_from_file(links_file(tmp_path, "99-99", "0-0"), SOURCES, TARGETS)


def test_evaluates_align_gold_is_read_in_the_runs_unit(tmp_path):
    path = links_file(tmp_path, "12-0", "0-0")
    with pytest.raises(DataError, match="link 12-0 is outside its sentence pair of 5 x 7 words"):
        choose_golds(Run(), None, SOURCES, TARGETS, align_gold=path, use_rwth=False)
    found = choose_golds(Run(character_level=True), None, SOURCES, TARGETS, align_gold=path,
                         use_rwth=False)
    assert found.golds[0].alignments[0].sure == {(12, 0)}


def rwth_folder(tmp_path, links):
    folder = tmp_path / "rwth"
    folder.mkdir(parents=True)
    (folder / "test.de-en").write_text("".join(f"{s} ||| {t}\n" for s, t in zip(
        SOURCES, TARGETS, strict=True)), encoding="utf-8")
    (folder / "deen.talp").write_text("".join(line + "\n" for line in links), encoding="utf-8")
    return folder


@pytest.mark.parametrize("reverse", [False, True])
def test_the_rwth_gold_names_its_links_file_either_way_round(tmp_path, reverse):
    folder = rwth_folder(tmp_path, ["1-1 5p7", "3-4"])
    with pytest.raises(DataError) as error:
        rwth_gold(folder, reverse=reverse)
    assert str(error.value) == (f"{folder / 'deen.talp'} line 2: link 3-4 is outside its "
                                f"sentence pair of 3 x 3 words (source x target)")
    good = rwth_gold(rwth_folder(tmp_path / "good", ["1-1 5p7", "3-3"]), reverse=reverse)
    assert len(good.sources) == 2


@pytest.fixture
def dates(tmp_path):
    folder = tmp_path / "dates"
    write_dates(folder, size=40, seed=3)
    lines = {side: (folder / f"test.{side}").read_text(encoding="utf-8").splitlines()
             for side in ("src", "tgt")}
    return folder, lines["src"], lines["tgt"]


@pytest.mark.parametrize("side", ["src", "tgt"])
def test_the_dates_gold_is_checked_in_characters_either_way_round(dates, side):
    folder, sources, targets = dates
    if side == "tgt":
        sources, targets = targets, sources
    gold = dates_gold(Run(character_level=True), folder / f"test.{side}", sources, targets)
    assert gold is not None and len(gold.sources) == len(sources)
    align = folder / "test.align"
    lines = align.read_text(encoding="utf-8").splitlines()
    lines[1] += " 99-0"
    align.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as error:
        dates_gold(Run(character_level=True), folder / f"test.{side}", sources, targets)
    source, target = (sources, targets) if side == "src" else (targets, sources)
    assert str(error.value) == (f"{align} line 2: link 99-0 is outside its sentence pair of "
                                f"{len(source[1])} x {len(target[1])} characters (source x "
                                f"target)")
