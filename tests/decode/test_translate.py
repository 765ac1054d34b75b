"""translate: input order, batching independence, blank lines, beam 1, labelled attention."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from attnlab.data import EOS_ID, collate
from attnlab.decode import beam_search, greedy_search
from attnlab.translation import DecodeConfig, iter_translate, translate
from attnlab.translation.labels import merge_subwords

from .models import tiny, vocabularies

SENTENCES = ["ab cde", "", "g", "fed cba ab", "   ", "abc", "gg fa", "b"]
SEARCH = DecodeConfig(beam=3, alpha=1.0, max_len_ratio=1.0, max_len_extra=2)


def limit(n):
    return int(SEARCH.max_len_ratio * n) + SEARCH.max_len_extra


@pytest.fixture(scope="module")
def setup():
    return tiny("bahdanau-additive"), vocabularies()


def test_input_order_and_batching_do_not_change_results(setup):
    model, vocabs = setup
    together = translate(model, vocabs, SENTENCES, replace(SEARCH, batch_size=64))
    in_pairs = translate(model, vocabs, SENTENCES, replace(SEARCH, batch_size=2))
    streamed = list(iter_translate(model, vocabs, iter(SENTENCES), replace(SEARCH, batch_size=2),
                                   pool_size=3))
    for index, sentence in enumerate(SENTENCES):
        alone = translate(model, vocabs, [sentence], SEARCH)[0]
        for other in (together[index], in_pairs[index], streamed[index]):
            assert other.tokens == alone.tokens and other.text == alone.text
            assert other.score == pytest.approx(alone.score, abs=1e-9)
    # and it is beam search on the sentence as batching collates it
    ids = vocabs.src.encode(SENTENCES[3])
    batch = collate([(ids, [])])
    best = beam_search(model, batch.src, batch.src_mask, beam_size=3, max_len=limit)[0][0]
    assert together[3].tokens == best.tokens
    assert together[3].text == vocabs.tgt.decode(best.tokens)


def test_blank_lines_give_empty_results_without_the_model(setup, monkeypatch):
    model, vocabs = setup
    encode, rows = model.encode, []
    monkeypatch.setattr(model, "encode", lambda src, mask: rows.append(mask.sum(-1)) or
                        encode(src, mask))
    results = translate(model, vocabs, SENTENCES, SEARCH)
    assert int(torch.cat(rows).min()) > 1  # every source the model saw had a real piece
    assert sum(len(r) for r in rows) == len([s for s in SENTENCES if s.strip()])
    for index in (1, 4):
        empty = results[index]
        assert empty.text == "" and empty.tokens == [] and empty.target_pieces == []
        assert empty.source_pieces == ["</s>"] and empty.source_words == ["</s>"]
        assert empty.attention.shape == (0, 1) and empty.word_attention.shape == (0, 1)


def test_pieces_words_and_attention(setup):
    model, vocabs = setup
    result = translate(model, vocabs, ["fed cba ab"], SEARCH)[0]
    assert result.source_pieces == [*"fed cba ab", "</s>"]
    assert result.source_words == ["fed", "cba", "ab", "</s>"]
    assert result.target_pieces == [vocabs.tgt.id_to_piece(i) for i in result.tokens]
    assert result.target_words == result.target_pieces  # word vocabulary: a piece is a word
    assert result.attention.shape == (len(result.tokens), len(result.source_pieces))
    np.testing.assert_allclose(result.attention.sum(1), 1.0)
    source_words = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3]  # a space ends the word before it
    expected = merge_subwords(result.attention, source_words, list(range(len(result.tokens))))
    np.testing.assert_allclose(result.word_attention, expected)
    np.testing.assert_allclose(result.word_attention.sum(1), 1.0)


def test_beam_one_goes_through_the_same_function(setup):
    model, vocabs = setup
    results = translate(model, vocabs, SENTENCES, replace(SEARCH, beam=1))
    for sentence, result in zip(SENTENCES, results, strict=True):
        if not sentence.strip():
            continue
        batch = collate([(vocabs.src.encode(sentence), [])])
        greedy = greedy_search(model, batch.src, batch.src_mask, max_len=limit)[0]
        assert result.tokens == greedy.tokens
        assert result.score == pytest.approx(greedy.score, abs=1e-12)
        assert (result.target_pieces[-1] == "</s>") == (greedy.tokens[-1] == EOS_ID)


def test_model_without_attention_still_labels_words():
    model, vocabs = tiny("none"), vocabularies()
    result = translate(model, vocabs, ["ab cde"], SEARCH)[0]
    assert result.attention is None and result.word_attention is None
    assert result.source_words == ["ab", "cde", "</s>"]


def test_word_attention_is_merged_only_when_read(setup, monkeypatch):
    """Plain translation never merges pieces to words; the first read does, once."""
    import attnlab.translation.labels as labels

    model, vocabs = setup
    merges = []
    merge = labels.merge_subwords
    monkeypatch.setattr(labels, "merge_subwords", lambda *a: merges.append(a) or merge(*a))
    results = translate(model, vocabs, SENTENCES, SEARCH)
    assert [r.text for r in results] and merges == []
    first = results[0]
    source_words = [0, 0, 0, 1, 1, 1, 2]  # "ab cde" + "</s>": a space ends its word
    expected = merge(first.attention, source_words, list(range(len(first.tokens))))
    np.testing.assert_array_equal(first.word_attention, expected)
    assert first.word_attention is first.word_attention and len(merges) == 1
    assert vars(results[2])["word_attention"] is not None  # still pending, not merged
    assert len(merges) == 1


def test_n_best_starts_with_the_one_best_and_is_sorted(setup):
    model, vocabs = setup
    search = replace(SEARCH, beam=4)
    best = translate(model, vocabs, SENTENCES, search)
    lists = [result.hypotheses for result in
             translate(model, vocabs, SENTENCES, replace(search, batch_size=3, n_best=3))]
    assert len(lists) == len(SENTENCES)
    for sentence, one, hypotheses in zip(SENTENCES, best, lists, strict=True):
        if not sentence.strip():
            assert [h.text for h in hypotheses] == [""]
            continue
        assert len(hypotheses) == 3
        assert hypotheses[0].tokens == one.tokens and hypotheses[0].text == one.text
        assert hypotheses[0].score == pytest.approx(one.score, abs=1e-9)
        scores = [h.score for h in hypotheses]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(h.tokens) for h in hypotheses}) == 3  # distinct hypotheses
        for h in hypotheses:
            assert h.attention.shape == (len(h.tokens), len(h.source_pieces))


@pytest.mark.parametrize("n_best", [0, 5])
def test_n_best_must_fit_in_the_beam(setup, n_best):
    model, vocabs = setup
    with pytest.raises(ValueError, match="n_best must be between 1 and the beam size 4"):
        replace(SEARCH, beam=4, n_best=n_best)
