"""corpus_scores against sacreBLEU called directly, and the by-length table."""

import math

import pytest
import sacrebleu

from attnlab.errors import DataError
from attnlab.eval import BucketRow, bleu_by_length, corpus_scores, format_buckets

HYPS = [
    "the cat sat on the mat .",
    "A man is playing Football in the park .",
    "two dogs run",
    "she reads a long book about the history of the old city near the river .",
]
REFS = [
    "the cat sat on a mat .",
    "a man plays football in the park .",
    "two dogs are running",
    "she is reading a long book about the history of the old town by the river .",
]


def test_scores_equal_sacrebleu_directly():
    scores = corpus_scores(HYPS, REFS)
    assert scores.bleu == pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS]).score)
    assert scores.chrf == pytest.approx(sacrebleu.corpus_chrf(HYPS, [REFS]).score)
    lower = sacrebleu.corpus_bleu(HYPS, [REFS], lowercase=True, tokenize="13a").score
    assert scores.bleu_lowercase == pytest.approx(lower)
    assert scores.bleu_lowercase > scores.bleu  # "A"/"Football" only match once lowercased
    assert scores.sentences == 4


def test_signatures_are_reported():
    scores = corpus_scores(HYPS, REFS)
    assert "tok:13a" in scores.bleu_signature and "case:mixed" in scores.bleu_signature
    assert "case:lc" in scores.bleu_lowercase_signature
    assert scores.chrf_signature.startswith("nrefs:1") and "version:" in scores.chrf_signature
    text = scores.format()
    for signature in (scores.bleu_signature, scores.chrf_signature):
        assert signature in text
    assert "lowercased" in text and "on 4 sentences" in text


def test_mismatched_lengths_name_the_counts():
    with pytest.raises(DataError, match="3 hypotheses but 4 references"):
        corpus_scores(HYPS[:3], REFS)
    with pytest.raises(DataError, match="empty"):
        corpus_scores([], [])


def test_length_buckets_partition_the_corpus():
    sources = ["ein Wort", "drei kurze Wörter", "x " * 12, "y " * 60]
    rows = bleu_by_length(sources, HYPS, REFS, edges=(0, 3, 10, 20, math.inf))
    assert [row.count for row in rows] == [1, 1, 1, 1]
    assert [(row.lo, row.hi) for row in rows] == [(0, 3), (3, 10), (10, 20), (20, math.inf)]
    # each bucket's BLEU is corpus BLEU of exactly its sentences
    assert rows[0].bleu == pytest.approx(sacrebleu.corpus_bleu(HYPS[:1], [REFS[:1]]).score)
    assert rows[3].bleu == pytest.approx(sacrebleu.corpus_bleu(HYPS[3:], [REFS[3:]]).score)


def test_empty_buckets_are_counted_not_printed():
    rows = bleu_by_length(["a b"], HYPS[:1], REFS[:1])
    assert rows[0].count == 1 and all(row.bleu is None for row in rows[1:])
    table = format_buckets(rows).splitlines()
    assert len(table) == 3 and "0-9" in table[1] and "50+" not in table[1]
    assert table[2].strip() == "(5 empty buckets left out (10-19, 20-29, 30-39, 40-49, 50+))"
    assert BucketRow(10, 20, 0, None).label == "10-19"
    full = bleu_by_length(["a b", "c " * 12], HYPS[:2], REFS[:2], edges=(0, 10, math.inf))
    assert len(format_buckets(full).splitlines()) == 3  # nothing empty: no note


def test_sentence_outside_buckets_is_an_error():
    with pytest.raises(ValueError, match="source sentence 0 has 5 words"):
        bleu_by_length(["a b c d e"], HYPS[:1], REFS[:1], edges=(0, 3))
    with pytest.raises(ValueError, match="increasing"):
        bleu_by_length(["a"], HYPS[:1], REFS[:1], edges=(0, 10, 5))
