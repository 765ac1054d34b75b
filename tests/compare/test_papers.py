"""The papers' tables: well-formed rows, stable keys, and spot checks of figures that were read
off the papers' own tables."""

import pytest

from attnlab.compare.papers import PAPERS, PaperTable, row_value, tables_for

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
    assert row_value("bahdanau2015", row, column) == expected


@pytest.mark.parametrize("row, column, expected", [
    ("global (dot)", "BLEU", 18.6),
    ("global (dot)", "BLEU + unk replace", 20.5),
    ("local-p (general)", "perplexity", 5.9),
    ("local-p (general)", "BLEU + unk replace", 20.9),
    ("local-m (dot)", "perplexity", 7.0),
    ("base + reverse + dropout", "BLEU", 14.0),
    ("base + reverse + dropout", "perplexity", 8.1),
])
def test_luong_tables_1_and_4(row, column, expected):
    assert row_value("luong2015", row, column) == expected


def test_luong_reports_the_five_bleu_gain_over_no_attention():
    gain = (row_value("luong2015", "+ local-p (general) + feed", "BLEU")
            - row_value("luong2015", "base + reverse + dropout", "BLEU"))
    assert gain == pytest.approx(5.0)


def test_a_figure_the_paper_does_not_give_is_none():
    assert row_value("luong2015", "local-m (dot)", "BLEU") is None
    assert row_value("luong2015", "ensemble of 8 + unk replace", "perplexity") is None


@pytest.mark.parametrize("key, row, column", [
    ("bahdanau2015", "no such row", "BLEU (all)"),
    ("bahdanau2015", "RNNsearch-50", "no such column"),
    ("luong2015", "RNNsearch-50", "BLEU"),
    ("no such paper", "RNNsearch-50", "BLEU (all)"),
    (None, "RNNsearch-50", "BLEU (all)"),
])
def test_missing_row_column_or_paper_gives_none(key, row, column):
    assert row_value(key, row, column) is None


def test_tables_for_unknown_or_no_paper_is_empty():
    assert tables_for(None) == ()
    assert tables_for("") == ()
    assert tables_for("no such paper") == ()
    assert tables_for("bahdanau2015") == PAPERS["bahdanau2015"]
