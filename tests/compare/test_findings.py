"""The report's AER findings: one ranking per gold set, even where a member was scored on fewer
of its pairs (a sentence over max_len left out renames the set: the mechanisms report used to
give Luong location a ranking of its own)."""

from attnlab.compare.stats.verdicts import matrix, pairwise
from attnlab.translation.findings import _aer_lines, findings

GOLD = "RWTH de-en gold"
RWTH = {"kind": "rwth", "title": "the RWTH German-English gold", "short": "RWTH"}
DATES = {"kind": "dates", "title": "the dates task's gold", "short": "dates"}


def member(label, aer, pairs=508, name=GOLD, gold=RWTH):
    return {"label": label,
            "alignments": [{"name": name, "aer": aer, "pairs": pairs, "gold": gold}]}


def test_members_scored_on_fewer_pairs_are_ranked_with_the_others_and_say_so():
    records = [member("Bahdanau", 0.858), member("concat", 0.801),
               member("location", 0.834, 507, GOLD + "; 1 pairs longer than max_len=101 left out"),
               {"label": "no attention", "alignments": []}]
    assert _aer_lines(records) == [
        "AER on the RWTH German-English gold, best first: concat 0.801, location 0.834 (on 507 "
        "of 508 pairs), "
        "Bahdanau 0.858."]


def test_each_gold_set_has_its_own_ranking():
    records = [member("a", 0.4, 2000, "dates gold (test.align)", DATES),
               member("b", 0.3, 2000, "dates gold (test.align)", DATES),
               member("a", 0.8), {"label": "c", "alignments": [{"name": GOLD, "aer": None,
                                                               "gold": RWTH}]}]
    assert _aer_lines(records) == [
        "AER on the dates task's gold, best first: b 0.300, a 0.400.",
        "AER on the RWTH German-English gold, best first: a 0.800."]


def translated(name, label, bleu, seeds=2, language="en"):
    runs = [{"hypotheses": ["a b c d"] * 4,
             "references": [f"{language} b c d" if k % 2 else f"{language} b c e"] * 4}
            for k in range(seeds)]
    return {"name": name, "label": label, "task": "translation", "scores": {"bleu": bleu},
            "attention_row": True, "alignments": [], "runs": runs}


def test_a_member_trained_the_other_way_is_neither_ranked_nor_tested_with_the_others():
    """The mechanisms suite's English-German twins translate into another language (other
    references): their BLEU says nothing against the German-English members'."""
    records = [translated("luong-general", "general", 19.6),
               translated("luong-dot", "dot", 18.0),
               translated("luong-general-en-de", "general, en-de", 23.8, language="de")]
    lines = findings(records)
    assert lines[0] == "BLEU, best first: general 19.60, dot 18.00."
    assert lines[1] == ("Trained the other way, so not ranked with the others (another target "
                        "language): general, en-de BLEU 23.80.")
    tests = pairwise(records, ("bleu",))
    assert {(t.a, t.b) for t in tests} == {("luong-general", "luong-dot")}
    table = matrix(tests, records, "bleu")
    assert [row[0] for row in table] == ["bleu", "general"] and table[0][1:] == ["dot"]
