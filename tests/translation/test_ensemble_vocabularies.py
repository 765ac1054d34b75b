"""An ensemble's vocabularies are compared by what they map, not by their files: two
sentencepiece models trained on the same text are the same vocabulary, though each file records
the temporary folder it was trained in; another vocabulary is one sentence naming both runs."""

import pytest

from attnlab.data import SPECIAL_PIECES, TokenVocab, build_vocab
from attnlab.errors import CheckpointError
from attnlab.translation.corpus import Vocabularies
from attnlab.translation.ensemble import check_same_vocabularies, vocabulary_digest

TEXTS = ["ein mann spielt gitarre .", "zwei männer spielen fußball .", "die frau läuft ."] * 30


def bpe(texts=TEXTS):
    return build_vocab("bpe", texts, size=40, name=None, directory=None)


def test_the_same_sentencepiece_vocabulary_trained_twice_is_the_same():
    first, second = bpe(), bpe()
    assert vocabulary_digest(first) == vocabulary_digest(second)
    other = bpe([text.upper() for text in TEXTS])
    assert vocabulary_digest(other) != vocabulary_digest(first)
    words = TokenVocab([*SPECIAL_PIECES, "a", "b"], "word")
    assert vocabulary_digest(words) != vocabulary_digest(
        TokenVocab([*SPECIAL_PIECES, "a", "b"], "char"))


def test_runs_with_other_vocabularies_are_one_sentence(tmp_path):
    for name, target in (("a", bpe()), ("b", bpe()), ("c", bpe([t.upper() for t in TEXTS]))):
        (tmp_path / name).mkdir()
        Vocabularies(bpe(), target).save(tmp_path / name)
    check_same_vocabularies([tmp_path / "a", tmp_path / "b"])
    with pytest.raises(CheckpointError) as error:
        check_same_vocabularies([tmp_path / "a", tmp_path / "b", tmp_path / "c"])
    assert str(error.value) == (
        f"{tmp_path / 'a'} and {tmp_path / 'c'} have different target vocabularies, so they "
        f"cannot be ensembled: an ensemble needs runs trained with the same vocabularies")
