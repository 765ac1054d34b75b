"""The report's AER findings: one ranking per gold set, even where a member was scored on fewer
of its pairs (a sentence over max_len left out renames the set: the mechanisms report used to
give Luong location a ranking of its own)."""

from attnlab.compare.findings import _aer_lines

GOLD = "RWTH de-en gold (/data/rwth-deen-gold)"


def member(label, aer, pairs=508, name=GOLD):
    return {"label": label, "alignments": [{"name": name, "aer": aer, "pairs": pairs}]}


def test_members_scored_on_fewer_pairs_are_ranked_with_the_others_and_say_so():
    records = [member("Bahdanau", 0.858), member("concat", 0.801),
               member("location", 0.834, 507, GOLD + "; 1 pairs longer than max_len=101 left out"),
               {"label": "no attention", "alignments": []}]
    assert _aer_lines(records) == [
        "AER on RWTH gold, best first: concat 0.801, location 0.834 (on 507 of 508 pairs), "
        "Bahdanau 0.858."]


def test_each_gold_set_has_its_own_ranking():
    records = [member("a", 0.4, 2000, "dates gold (test.align)"), member("b", 0.3, 2000,
                                                                         "dates gold (test.align)"),
               member("a", 0.8), {"label": "c", "alignments": [{"name": GOLD, "aer": None}]}]
    assert _aer_lines(records) == ["AER on the dates gold, best first: b 0.300, a 0.400.",
                                   "AER on RWTH gold, best first: a 0.800."]
