"""The papers' tables: well-formed rows, stable keys, and spot checks of figures that were read
off the papers' own tables."""

import pytest

from attnlab.compare.report.papers import (
    BAHDANAU_TABLE_1,
    LUONG_TABLE_1,
    LUONG_TABLE_4,
    PAPERS,
    PaperTable,
    tables_for,
)

ALL_TABLES = [table for tables in PAPERS.values() for table in tables]


def test_the_suite_paper_keys_exist():
    assert {"luong2015", "bahdanau2015", "cheng2016", "xu2015"} <= set(PAPERS)


@pytest.mark.parametrize("table", ALL_TABLES, ids=lambda t: t.citation)
def test_every_row_has_one_value_per_column(table):
    assert table.columns and table.rows
    for name, values in table.rows:
        assert len(values) == len(table.columns), name
        assert all(v is None or isinstance(v, float) for v in values), name


@pytest.mark.parametrize("table", ALL_TABLES, ids=lambda t: t.citation)
def test_row_names_are_unique_and_tables_say_where_they_come_from(table):
    assert len(set(table.row_names)) == len(table.rows)
    assert all(name and name == name.strip() for name in table.row_names)
    assert table.setting and table.citation


@pytest.mark.parametrize("key", sorted(PAPERS))
def test_tables_are_filed_under_their_own_key(key):
    assert all(table.key == key for table in PAPERS[key])


def test_a_malformed_table_is_refused():
    with pytest.raises(ValueError, match="values"):
        PaperTable("x", "c", "s", ("a", "b"), (("row", (1.0,)),))
    with pytest.raises(ValueError, match="repeat"):
        PaperTable("x", "c", "s", ("a",), (("row", (1.0,)), ("row", (2.0,))))


@pytest.mark.parametrize("row, column, expected", [
    ("RNNencdec-30", "BLEU (all)", 13.93),
    ("RNNsearch-50", "BLEU (all)", 26.75),
    ("RNNsearch-50", "BLEU (no UNK)", 34.16),
    ("RNNsearch-50*", "BLEU (no UNK)", 36.15),
    ("Moses", "BLEU (all)", 33.30),
])
def test_bahdanau_table_1(row, column, expected):
    assert BAHDANAU_TABLE_1.value(row, column) == expected


@pytest.mark.parametrize("table, row, column, expected", [
    (LUONG_TABLE_4, "global (dot)", "BLEU", 18.6),
    (LUONG_TABLE_4, "global (dot)", "BLEU + unk replace", 20.5),
    (LUONG_TABLE_4, "local-p (general)", "perplexity", 5.9),
    (LUONG_TABLE_4, "local-p (general)", "BLEU + unk replace", 20.9),
    (LUONG_TABLE_4, "local-m (dot)", "perplexity", 7.0),
    (LUONG_TABLE_1, "base + reverse + dropout", "BLEU", 14.0),
    (LUONG_TABLE_1, "base + reverse + dropout", "perplexity", 8.1),
])
def test_luong_tables_1_and_4(table, row, column, expected):
    assert table.value(row, column) == expected


def test_luong_reports_the_five_bleu_gain_over_no_attention():
    gain = (LUONG_TABLE_1.value("+ local-p (general) + feed", "BLEU")
            - LUONG_TABLE_1.value("base + reverse + dropout", "BLEU"))
    assert gain == pytest.approx(5.0)


def test_a_figure_the_paper_does_not_give_is_none():
    assert LUONG_TABLE_4.value("local-m (dot)", "BLEU") is None
    assert LUONG_TABLE_1.value("ensemble of 8 + unk replace", "perplexity") is None


@pytest.mark.parametrize("table, row, column", [
    (BAHDANAU_TABLE_1, "no such row", "BLEU (all)"),
    (BAHDANAU_TABLE_1, "RNNsearch-50", "no such column"),
    (LUONG_TABLE_1, "RNNsearch-50", "BLEU"),
])
def test_a_missing_row_or_column_gives_none(table, row, column):
    assert table.value(row, column) is None


def test_tables_for_unknown_or_no_paper_is_empty():
    assert tables_for(None) == ()
    assert tables_for("") == ()
    assert tables_for("no such paper") == ()
    assert tables_for("bahdanau2015") == PAPERS["bahdanau2015"]
