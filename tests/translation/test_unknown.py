"""Unknown-word replacement on hand-made results: an <unk> copies the most attended source unit
(a word, a sentencepiece piece's surface), or its dictionary entry; "</s>" is never copied; the
n-best alternatives are replaced too; the dictionary file's errors are one sentence."""

import numpy as np
import pytest

from attnlab.data import EOS_ID, SPECIAL_PIECES, UNK_ID, TokenVocab, build_vocab
from attnlab.errors import DataError
from attnlab.translation import TranslationResult
from attnlab.translation.labels import label, sentence_pieces
from attnlab.translation.unknown import UnknownWords, read_dictionary

WORDS = TokenVocab([*SPECIAL_PIECES, "a", "man", "plays", "the", "guitar"], "word")


def result(source_vocab, target_vocab, source, tokens, attention):
    """A TranslationResult of `tokens` (target ids) with attention (T, S) over source pieces."""
    pieces = [target_vocab.id_to_piece(i) for i in tokens]
    labelled = label(source_vocab, target_vocab, sentence_pieces(source_vocab, source), pieces,
                     np.asarray(attention, float))
    return TranslationResult(**vars(labelled), text=target_vocab.decode(tokens), score=0.0,
                             log_prob=0.0, tokens=tokens)


def one_hot(rows, columns):
    """Attention (len(rows), columns) with row j peaked (0.7) on column rows[j]."""
    attention = np.full((len(rows), columns), 0.3 / (columns - 1))
    attention[np.arange(len(rows)), rows] = 0.7
    return attention


def test_an_unknown_word_copies_the_most_attended_source_word():
    source = TokenVocab([*SPECIAL_PIECES, "ein", "mann"], "word")
    tokens = [WORDS.piece_to_id("a"), UNK_ID, WORDS.piece_to_id("plays"), UNK_ID, EOS_ID]
    # source pieces: Ein Mann spielt Gitarre </s>; the <unk>s attend to Gitarre, then Mann
    found = result(source, WORDS, "Ein Mann spielt Gitarre", tokens, one_hot([0, 3, 2, 1, 4], 5))
    assert found.text == "a <unk> plays <unk>"
    assert UnknownWords(source).replace(found).text == "a Gitarre plays Mann"
    found.text = "a <unk> plays <unk>"
    dictionary = {"Gitarre": "guitar"}
    assert UnknownWords(source, dictionary).replace(found).text == "a guitar plays Mann"
    assert found.target_pieces[1] == "<unk>"  # the pieces stay the model's


def test_the_end_of_sentence_is_never_copied_and_alternatives_are_replaced():
    source = TokenVocab([*SPECIAL_PIECES, "ein"], "word")
    best = result(source, WORDS, "Ein Hund", [UNK_ID, EOS_ID], [[0.2, 0.3, 0.5], [0, 0, 1]])
    other = result(source, WORDS, "Ein Hund", [UNK_ID, UNK_ID], [[0.6, 0.1, 0.3], [0, .4, .6]])
    best.alternatives = [other]
    UnknownWords(source).replace(best)
    assert best.text == "Hund" and other.text == "Ein Hund"


def test_a_sentencepiece_unknown_piece_copies_the_surface_it_attends_to():
    texts = ["ein mann spielt gitarre .", "zwei männer spielen fußball .", "die frau"] * 20
    vocab = build_vocab("bpe", texts, size=40, name=None, directory=None)
    source = "ein ☃ mann"
    pieces = vocab.tokenize(source)  # ▁ ei n ▁ ☃ ▁m a nn
    snowman = pieces.index("☃")
    target = vocab.encode("ein") + [UNK_ID] + vocab.encode(" mann") + [EOS_ID]
    rows = [0] * len(target)
    rows[len(vocab.encode("ein"))] = snowman
    found = result(vocab, vocab, source, target, one_hot(rows, len(pieces) + 1))
    assert "<unk>" in found.text
    replaced = UnknownWords(vocab).replace(found).text
    assert replaced == found.text.replace("<unk>", "☃") and "☃" in replaced
    # a bare word-start piece gives its whole word
    rows[len(vocab.encode("ein"))] = pieces.index("▁", 1)
    found = result(vocab, vocab, source, target, one_hot(rows, len(pieces) + 1))
    assert "☃" in UnknownWords(vocab).replace(found).text


def test_a_model_without_attention_cannot_replace():
    source = TokenVocab([*SPECIAL_PIECES, "ein"], "word")
    found = result(source, WORDS, "Ein", [UNK_ID, EOS_ID], [[0.5, 0.5], [0.5, 0.5]])
    found.attention = None
    with pytest.raises(DataError, match="no attention"):
        UnknownWords(source).replace(found)


def test_the_dictionary_file(tmp_path):
    path = tmp_path / "dict.txt"
    path.write_text("# German-English\nHaus\thouse\nHaus house2\n\nHund dog\nKatze\tthe cat\n",
                    encoding="utf-8")
    assert read_dictionary(path) == {"Haus": "house", "Hund": "dog", "Katze": "the cat"}
    path.write_text("Haus\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 1: expected 'source target'"):
        read_dictionary(path)
    with pytest.raises(DataError, match="dictionary file not found"):
        read_dictionary(tmp_path / "missing.txt")
