import json

import pytest
import torch

from attnlab.data.vocab import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    SPECIAL_PIECES,
    UNK_ID,
    VOCAB_KINDS,
    build_vocab,
    load_vocab,
)
from attnlab.errors import ConfigError, DataError

CORPUS = [
    "ein hund läuft durch den park",
    "eine frau liest ein buch im park",
    "zwei kinder spielen mit einem ball",
    "der mann trinkt kaffee und liest",
    "a dog runs through the park",
    "a woman reads a book in the park",
    "two children play with a ball",
    "the man drinks coffee and reads",
] * 3
SIZES = {"bpe": 50, "unigram": 50, "word": None, "char": None}


@pytest.fixture(scope="module")
def vocabs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("vocab")
    built = {kind: build_vocab(kind, CORPUS, size=SIZES[kind], directory=directory, name=kind)
             for kind in VOCAB_KINDS}
    return directory, built


@pytest.mark.parametrize("kind", sorted(VOCAB_KINDS))
def test_special_ids_are_fixed(vocabs, kind):
    vocab = vocabs[1][kind]
    assert [vocab.id_to_piece(i) for i in (PAD_ID, UNK_ID, BOS_ID, EOS_ID)] == list(SPECIAL_PIECES)
    assert vocab.piece_to_id("</s>") == EOS_ID


@pytest.mark.parametrize("kind", sorted(VOCAB_KINDS))
def test_round_trip_on_training_text(vocabs, kind):
    vocab = vocabs[1][kind]
    for text in CORPUS[:8]:
        ids = vocab.encode(text)
        assert UNK_ID not in ids and BOS_ID not in ids and EOS_ID not in ids
        assert len(vocab.tokenize(text)) == len(ids)
        assert [vocab.id_to_piece(i) for i in ids] == vocab.tokenize(text)
        assert vocab.decode(ids) == text


@pytest.mark.parametrize("kind", sorted(VOCAB_KINDS))
def test_decode_skips_control_ids_and_accepts_tensors(vocabs, kind):
    vocab = vocabs[1][kind]
    ids = vocab.encode("the park")
    padded = torch.tensor([BOS_ID, *ids, EOS_ID, PAD_ID, PAD_ID])
    assert vocab.decode(padded) == "the park"


@pytest.mark.parametrize("kind", sorted(VOCAB_KINDS))
def test_unknown_is_unk_and_visible(vocabs, kind):
    vocab = vocabs[1][kind]
    ids = vocab.encode("park ☃")  # the snowman never occurs in the corpus
    assert UNK_ID in ids
    assert "<unk>" in vocab.decode(ids)


@pytest.mark.parametrize("kind", sorted(VOCAB_KINDS))
def test_reload_from_disk_is_identical(vocabs, kind):
    directory, built = vocabs
    loaded = load_vocab(directory, kind)
    assert loaded.kind == kind and len(loaded) == len(built[kind])
    assert [loaded.id_to_piece(i) for i in range(len(loaded))] == [
        built[kind].id_to_piece(i) for i in range(len(loaded))]
    for text in [*CORPUS[:8], "unseen wörds ☃ here"]:
        assert loaded.encode(text) == built[kind].encode(text)
        assert loaded.tokenize(text) == built[kind].tokenize(text)


def test_saved_files_are_plain(vocabs):
    directory, built = vocabs
    assert (directory / "bpe.model").is_file()
    vocab_lines = (directory / "unigram.vocab").read_text(encoding="utf-8").splitlines()
    assert vocab_lines[0].split("\t")[0] == "<pad>" and len(vocab_lines) == len(built["unigram"])
    word = json.loads((directory / "word.json").read_text(encoding="utf-8"))
    assert word["kind"] == "word" and word["pieces"][:4] == list(SPECIAL_PIECES)


def test_sentencepiece_size_is_respected(vocabs):
    assert len(vocabs[1]["bpe"]) == 50 and len(vocabs[1]["unigram"]) == 50


def test_word_vocab_ranks_by_frequency_and_caps_size(tmp_path):
    texts = ["b a a", "c b a", "d"]
    vocab = build_vocab("word", texts, size=6, directory=tmp_path, name="w")
    assert vocab.pieces == [*SPECIAL_PIECES, "a", "b"]
    assert vocab.encode("a b c") == [4, 5, UNK_ID]
    rare = build_vocab("word", texts, size=None, directory=tmp_path, name="r", min_freq=2)
    assert rare.pieces[4:] == ["a", "b"]


def test_char_vocab_has_space_token(vocabs):
    vocab = vocabs[1]["char"]
    assert vocab.tokenize("ab c") == ["a", "b", " ", "c"]
    assert vocab.piece_to_id(" ") != UNK_ID


def test_to_words_sentencepiece(vocabs):
    vocab = vocabs[1]["bpe"]
    pieces = ["▁the", "▁pa", "rk", "▁", ",", "</s>"]
    assert vocab.to_words(pieces) == [[0], [1, 2], [3, 4], [5]]


def test_to_words_sentencepiece_on_real_tokens(vocabs):
    for kind in ("bpe", "unigram"):
        vocab = vocabs[1][kind]
        text = "eine frau liest ein buch"
        groups = vocab.to_words(vocab.tokenize(text))
        assert len(groups) == len(text.split())
        assert [i for group in groups for i in group] == list(range(len(vocab.tokenize(text))))


def test_to_words_word_and_char(vocabs):
    assert vocabs[1]["word"].to_words(["a", "dog", "</s>"]) == [[0], [1], [2]]
    char = vocabs[1]["char"]
    # Spaces belong to the word before them; </s> is a word of its own.
    assert char.to_words(list("ab  c") + ["</s>"]) == [[0, 1, 2, 3], [4], [5]]
    assert char.to_words(list(" a")) == [[0, 1]]


def test_unknown_kind_lists_options(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown vocabulary kind 'wordpiece'; options: "
                                          r"\['bpe', 'char', 'unigram', 'word'\]"):
        build_vocab("wordpiece", CORPUS, size=10, directory=tmp_path, name="x")


def test_sentencepiece_size_too_large_says_maximum(tmp_path):
    with pytest.raises(DataError, match=r"bpe vocabulary size 5000 is too large for this "
                                        r"corpus: sentencepiece can make at most \d+ pieces"):
        build_vocab("bpe", CORPUS, size=5000, directory=tmp_path, name="big")
    assert not (tmp_path / "big.model").exists()


def test_sentencepiece_size_too_small_says_minimum(tmp_path):
    with pytest.raises(DataError, match=r"unigram vocabulary size 8 is too small .* at least \d+"):
        build_vocab("unigram", CORPUS, size=8, directory=tmp_path, name="small")


def test_sentencepiece_soft_limit_shrinks(tmp_path):
    vocab = build_vocab("unigram", CORPUS, size=5000, directory=tmp_path, name="soft",
                        hard_vocab_limit=False)
    assert 30 < len(vocab) < 5000


def test_bad_options_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="unknown sentencepiece option 'bogus'"):
        build_vocab("bpe", CORPUS, size=60, directory=tmp_path, name="x", bogus=1)
    with pytest.raises(ConfigError, match="fixed for every vocabulary"):
        build_vocab("bpe", CORPUS, size=60, directory=tmp_path, name="x", pad_id=5)
    with pytest.raises(ConfigError, match=r"unknown word vocabulary options \['bogus'\]"):
        build_vocab("word", CORPUS, size=None, directory=tmp_path, name="x", bogus=1)


def test_empty_corpus_is_data_error(tmp_path):
    with pytest.raises(DataError, match="all texts are empty"):
        build_vocab("char", ["", "  "], size=None, directory=tmp_path, name="x")


def test_missing_or_damaged_vocab(tmp_path):
    with pytest.raises(DataError, match="vocabulary not found: .*nope.json"):
        load_vocab(tmp_path, "nope")
    (tmp_path / "bad.json").write_text('{"kind": "word", "pieces": ["a"]}', encoding="utf-8")
    with pytest.raises(DataError, match="bad.json: not a readable vocabulary"):
        load_vocab(tmp_path, "bad")
