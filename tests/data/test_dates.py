"""The dates task: sources decode to their targets, weekdays are right, gold links are exact."""

from __future__ import annotations

import datetime
import json
import re

import pytest
from babel.dates import get_day_names, get_month_names
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.cli import main
from attnlab.data.date_formats import LANGUAGES, PATTERNS, order_ambiguous, render
from attnlab.data.dates import (
    FIRST_DATE,
    LAST_DATE,
    generate_dates,
    gold_alignment,
    write_dates,
)
from attnlab.errors import ConfigError
from attnlab.translation.alignment import read_links

TARGET_FIELD = {0: "year", 1: "year", 2: "year", 3: "year", 5: "month", 6: "month",
                8: "day", 9: "day"}
WIDTHS = ("abbreviated", "wide")
CONTEXTS = ("format", "stand-alone")


@pytest.fixture(scope="module")
def sample():
    return generate_dates(2000, seed=11)


def names(table, language, key):
    """All CLDR names (abbreviated and wide, both contexts) of month/weekday `key`, casefolded."""
    return {table(w, c, language)[key].casefold() for w in WIDTHS for c in CONTEXTS}


def field_text(example, name):
    field = example.fields[name]
    return example.source[field.start:field.end]


def decode(source, fields, language) -> datetime.date:
    """Read the date back from a source with Babel's tables: an independent check."""
    year_text, month_text, day_text = (
        source[fields[n].start:fields[n].end] for n in ("year", "month", "day"))
    year = int(year_text)
    if len(year_text) == 2:
        year += 1900 if year >= 50 else 2000
    if month_text.isdigit():
        month = int(month_text)
    else:
        matches = [m for m in range(1, 13)
                   if month_text.casefold() in names(get_month_names, language, m)]
        assert len(matches) == 1, month_text
        month = matches[0]
    return datetime.date(year, month, int(day_text))


def check_invariants(example):
    """Everything that must hold for any example; the naive statement of the docstring's rules."""
    date = decode(example.source, example.fields, example.language)
    assert example.target == date.isoformat()
    assert FIRST_DATE <= date <= LAST_DATE
    if "weekday" in example.fields:
        weekday = field_text(example, "weekday").casefold()
        assert weekday in names(get_day_names, example.language, date.weekday())
    if order_ambiguous(example.pattern):
        assert date.day > 12 or date.day == date.month  # one reading only
    links = example.alignment
    assert links == sorted(set(links))
    assert all(0 <= i < len(example.source) and 0 <= j < 10 for i, j in links)
    assert not any(j in (4, 7) for _, j in links)  # hyphens unaligned
    target_end = {"year": 4, "month": 7, "day": 10}
    for j, name in TARGET_FIELD.items():
        field = example.fields[name]
        aligned = {i for i, jj in links if jj == j}
        from_right = target_end[name] - j
        if field.numeric and from_right <= field.end - field.start:
            assert aligned == {field.end - from_right}
            assert example.source[field.end - from_right] == example.target[j]
        else:  # padding, inferred century or a name: the whole field
            assert aligned == set(range(field.start, field.end))
    in_fields = {i for n in ("year", "month", "day")
                 for i in range(example.fields[n].start, example.fields[n].end)}
    assert {i for i, _ in links} == in_fields  # weekday and literals unaligned
    assert all(not c.isdigit() for i, c in enumerate(example.source) if i not in in_fields)
    assert "\n" not in example.source and "\r" not in example.source


def test_sample_invariants(sample):
    for example in sample:
        check_invariants(example)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**63))
def test_invariants_for_any_seed(seed):
    examples = generate_dates(40, seed)
    assert len({e.source for e in examples}) == 40
    for example in examples:
        check_invariants(example)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_pattern_renders_decodable_dates(language):
    dates = [datetime.date(1950, 1, 1), datetime.date(2000, 2, 29), datetime.date(2049, 12, 31),
             datetime.date(1987, 11, 23)]
    for pattern in PATTERNS[language]:
        for date in dates:
            for case in ("cldr", "upper"):
                rendered = render(date, pattern, language, case)
                decoded = decode(rendered.text, rendered.fields, language)
                assert decoded == date, (pattern, rendered.text)
                links = gold_alignment(rendered.fields)
                assert {j for _, j in links} == set(TARGET_FIELD)


def test_same_seed_same_data_other_seed_other_data():
    assert generate_dates(200, seed=5) == generate_dates(200, seed=5)
    assert [e.source for e in generate_dates(200, seed=5)] != [
        e.source for e in generate_dates(200, seed=6)]


def test_variety(sample):
    assert {e.language for e in sample} == set(LANGUAGES)
    used = {(e.language, e.pattern) for e in sample}
    assert len(used) > 0.9 * sum(len(PATTERNS[language]) for language in LANGUAGES)
    with_weekday = [e for e in sample if "weekday" in e.fields]
    assert 200 < len(with_weekday) < len(sample) - 200  # optional, and common
    assert any(len(field_text(e, "year")) == 2 for e in sample)
    assert any(not e.fields["month"].numeric for e in sample)
    assert any(e.fields["month"].numeric for e in sample)
    assert any(e.source.isupper() for e in sample)
    assert any(e.source != e.source.lower() and e.language != "zh" for e in sample)
    first = {min(e.fields[n].start for n in ("year", "month", "day")) for e in sample}
    orders = {tuple(sorted(("year", "month", "day"), key=lambda n, e=e: e.fields[n].start))
              for e in sample}
    assert {("day", "month", "year"), ("month", "day", "year"), ("year", "month", "day")} <= orders
    assert len(first) > 1
    assert len({e.source for e in sample}) == len(sample)


def test_known_forms():
    date = datetime.date(2024, 3, 5)
    assert render(date, "EEEE, MMMM d, y", "en").text == "Tuesday, March 5, 2024"
    assert render(date, "d. MMMM y", "de").text == "5. März 2024"
    assert render(date, "EEEE d MMMM y", "fr").text == "mardi 5 mars 2024"
    assert render(date, "y年M月d日 EEEE", "zh").text == "2024年3月5日 星期二"
    assert render(date, "dd.MM.yy", "de").text == "05.03.24"
    # "05.03.24": day 0-1, month 3-4, year 6-7; century inferred from both year digits.
    links = gold_alignment(render(date, "dd.MM.yy", "de").fields)
    assert links == sorted([(6, 0), (7, 0), (6, 1), (7, 1), (6, 2), (7, 3),
                            (3, 5), (4, 6), (0, 8), (1, 9)])


def test_write_and_read_back(tmp_path):
    sizes = write_dates(tmp_path, size=100, seed=3)
    assert sizes == {"train": 80, "val": 10, "test": 10}
    examples = generate_dates(100, seed=3)
    start = 0
    for split, count in sizes.items():
        part = examples[start:start + count]
        start += count
        src = (tmp_path / f"{split}.src").read_text(encoding="utf-8").splitlines()
        tgt = (tmp_path / f"{split}.tgt").read_text(encoding="utf-8").splitlines()
        align_lines = (tmp_path / f"{split}.align").read_text(encoding="utf-8").splitlines()
        assert src == [e.source for e in part] and tgt == [e.target for e in part]
        assert all(re.fullmatch(r"\d+-\d+( \d+-\d+)*", line) for line in align_lines)
        # read back by the one Pharaoh reader: all sure links, in the order written
        gold = read_links(tmp_path / f"{split}.align")
        assert [sorted(a.sure) for a in gold] == [e.alignment for e in part]
        assert all(a.possible == a.sure for a in gold)
    meta = json.loads((tmp_path / "meta.json").read_text(encoding="utf-8"))
    assert meta["seed"] == 3 and meta["size"] == 100 and meta["splits"] == sizes
    assert meta["languages"] == list(LANGUAGES) and "Pharaoh" in meta["files"]["align"]


@pytest.mark.parametrize("splits", [{"train": 0.8, "test": 0.1}, {"train": 1.2, "test": -0.2}])
def test_bad_splits(tmp_path, splits):
    with pytest.raises(ConfigError, match="sum to 1"):
        write_dates(tmp_path, size=10, seed=0, splits=splits)


def test_cli(tmp_path, capsys):
    assert main(["data", "dates", "--dest", str(tmp_path), "--size", "50", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path) in out and "train 40, val 5, test 5" in out
    assert len((tmp_path / "val.src").read_text(encoding="utf-8").splitlines()) == 5
    assert main(["data", "dates", "--dest", str(tmp_path), "--size", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
