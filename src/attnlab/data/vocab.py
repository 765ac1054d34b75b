"""Vocabularies: one interface over sentencepiece (BPE, unigram), word and character vocabularies.

Every kind uses the same special ids, so models, batching and decoding never ask which kind
they were given: PAD_ID=0 "<pad>", UNK_ID=1 "<unk>", BOS_ID=2 "<s>", EOS_ID=3 "</s>".

Files written by `save(directory, name)`:
  bpe/unigram  name.model, name.vocab (plain sentencepiece files) and name.json {"kind": ...}
  word/char    name.json {"kind": ..., "pieces": [piece of id 0, piece of id 1, ...]}
"""

from __future__ import annotations

import importlib
import json
import os
import re
import tempfile
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import sentencepiece

from attnlab.errors import ConfigError, DataError
from attnlab.files import atomic_output, writing

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
SPECIAL_PIECES = ("<pad>", "<unk>", "<s>", "</s>")
# Ids that mark structure, not text: decode drops them. UNK stays visible as "<unk>".
_CONTROL_IDS = frozenset({PAD_ID, BOS_ID, EOS_ID})
_CONTROL_PIECES = frozenset(SPECIAL_PIECES[i] for i in _CONTROL_IDS)
WORD_START = "\u2581"  # sentencepiece's "▁": this piece begins a new word


class Vocab(ABC):
    """Maps text to ids and back. `tokenize(t)[i]` is the piece of `encode(t)[i]`."""

    kind: str

    @abstractmethod
    def tokenize(self, text: str) -> list[str]:
        """The pieces of `text` as they appear in it (also for unknown ones), for labels."""

    @abstractmethod
    def encode(self, text: str) -> list[int]:
        """Ids of `text`'s pieces, without BOS or EOS (batching adds those)."""

    @abstractmethod
    def decode(self, ids: Iterable[int]) -> str:
        """Text of `ids` (a list or 1-D tensor); PAD, BOS and EOS are skipped wherever they are."""

    @abstractmethod
    def id_to_piece(self, index: int) -> str: ...

    @abstractmethod
    def piece_to_id(self, piece: str) -> int:
        """Id of `piece`, or UNK_ID if the vocabulary lacks it."""

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def _write(self, directory: Path, name: str) -> dict:
        """Write the kind's own files; return extra fields for name.json."""

    @abstractmethod
    def _starts_word(self, piece: str, previous: str) -> bool:
        """Whether `piece`, coming after `previous`, begins a new word."""

    def save(self, directory: str | os.PathLike, name: str) -> Path:
        """Write the vocabulary as `directory/name.*`, each file atomically (name.json last);
        returns the path of name.json. A failed write is one WriteError sentence."""
        directory = Path(directory)
        with writing(directory):
            directory.mkdir(parents=True, exist_ok=True)
        meta = {"kind": self.kind, **self._write(directory, name)}
        path = directory / f"{name}.json"
        with atomic_output(path) as file:
            file.write(json.dumps(meta, ensure_ascii=False, indent=0) + "\n")
        return path

    def to_words(self, pieces: list[str]) -> list[list[int]]:
        """Group piece positions into words: result[w] lists the positions of word w's pieces.

        The groups partition range(len(pieces)) in order, so attention over pieces can be merged
        into attention over words by summing columns (or averaging rows) within each group.
        A new word starts at a sentencepiece piece beginning with "▁", at every word-level piece,
        and at a character after a space for char vocabularies (a space ends the word before it);
        pieces that are only blanks join the next word if no text came before them.
        "<pad>", "<s>" and "</s>" are always words of their own.
        """
        groups: list[list[int]] = []
        previous, has_text = "", False
        for position, piece in enumerate(pieces):
            control = piece in _CONTROL_PIECES or previous in _CONTROL_PIECES
            if not groups or control or (has_text and self._starts_word(piece, previous)):
                groups.append([])
                has_text = False
            groups[-1].append(position)
            has_text = has_text or bool(piece.strip(" " + WORD_START))
            previous = piece
        return groups


class SentencePieceVocab(Vocab):
    """Subword vocabulary backed by a trained sentencepiece model (BPE or unigram LM)."""

    def __init__(self, model: bytes, kind: str):
        self.kind = kind
        self.processor = sentencepiece.SentencePieceProcessor(model_proto=model)

    def tokenize(self, text: str) -> list[str]:
        return self.processor.encode(text, out_type=str)

    def encode(self, text: str) -> list[int]:
        return self.processor.encode(text)

    def decode(self, ids: Iterable[int]) -> str:
        return self.processor.decode([int(i) for i in ids if int(i) not in _CONTROL_IDS])

    def id_to_piece(self, index: int) -> str:
        return self.processor.id_to_piece(int(index))

    def piece_to_id(self, piece: str) -> int:
        return self.processor.piece_to_id(piece)

    def __len__(self) -> int:
        return self.processor.get_piece_size()

    def splitting(self) -> bytes:
        """The model as it splits text (its pieces and their scores, its normalisation, the
        options it encodes with), less what two trainings of one vocabulary on two machines
        write differently (the scratch folder it was trained in, the thread count): equal for
        two vocabularies that split every text alike."""
        # its message classes are made as it is imported, which no type checker sees
        protos = importlib.import_module("sentencepiece.sentencepiece_model_pb2")
        proto = protos.ModelProto()
        proto.ParseFromString(self.processor.serialized_model_proto())
        for name in ("input", "input_format", "model_prefix", "num_threads"):
            proto.trainer_spec.ClearField(name)
        return proto.SerializeToString(deterministic=True)

    def _write(self, directory: Path, name: str) -> dict:
        with atomic_output(directory / f"{name}.model", "wb") as file:
            # without the scratch folder's path and the thread count: two trainings of one
            # vocabulary write the same bytes, and the file names no folder of this machine
            file.write(self.splitting())
        # Same "piece<TAB>score" format sentencepiece writes, for people reading the vocabulary.
        scores = (self.processor.get_score(i) for i in range(len(self)))
        lines = [f"{self.id_to_piece(i)}\t{score:g}" for i, score in enumerate(scores)]
        with atomic_output(directory / f"{name}.vocab") as file:
            file.write("\n".join(lines) + "\n")
        return {"model": f"{name}.model"}

    def _starts_word(self, piece: str, previous: str) -> bool:
        return piece.startswith(WORD_START)


class TokenVocab(Vocab):
    """Word vocabulary (whitespace-separated tokens) or character vocabulary (space included)."""

    def __init__(self, pieces: list[str], kind: str):
        if tuple(pieces[: len(SPECIAL_PIECES)]) != SPECIAL_PIECES:
            raise DataError(f"{kind} vocabulary must start with {list(SPECIAL_PIECES)}")
        self.kind = kind
        self.pieces = list(pieces)
        self._ids = {piece: index for index, piece in enumerate(self.pieces)}
        self._separator = " " if kind == "word" else ""

    def tokenize(self, text: str) -> list[str]:
        return text.split() if self.kind == "word" else list(text)

    def encode(self, text: str) -> list[int]:
        return [self._ids.get(piece, UNK_ID) for piece in self.tokenize(text)]

    def decode(self, ids: Iterable[int]) -> str:
        kept = (int(i) for i in ids if int(i) not in _CONTROL_IDS)
        return self._separator.join(self.pieces[i] for i in kept)

    def id_to_piece(self, index: int) -> str:
        return self.pieces[int(index)]

    def piece_to_id(self, piece: str) -> int:
        return self._ids.get(piece, UNK_ID)

    def __len__(self) -> int:
        return len(self.pieces)

    def _write(self, directory: Path, name: str) -> dict:
        return {"pieces": self.pieces}

    def _starts_word(self, piece: str, previous: str) -> bool:
        return self.kind == "word" or (previous == " " and piece != " ")


def _train_sentencepiece(kind, texts, size, options) -> Vocab:
    forced: dict[str, int | str] = {"pad_id": PAD_ID, "unk_id": UNK_ID, "bos_id": BOS_ID,
                                    "eos_id": EOS_ID}
    forced.update(zip(("pad_piece", "unk_piece", "bos_piece", "eos_piece"), SPECIAL_PIECES,
                      strict=True))
    if clash := sorted(set(options) & set(forced)):
        raise ConfigError(f"options {clash} are fixed for every vocabulary and cannot be set")
    settings = {
        "character_coverage": 1.0,  # keep every character: umlauts and accents are data
        "unk_surface": SPECIAL_PIECES[UNK_ID],  # decode shows "<unk>" as other kinds do
        "input_sentence_size": 2_000_000,  # sample WMT-sized corpora instead of using all
        "shuffle_input_sentence": True,
        "num_threads": os.cpu_count() or 1,
        "minloglevel": 2,  # sentencepiece logs every step to stderr otherwise
        **options,
        **forced,
    }
    with tempfile.TemporaryDirectory() as scratch:
        prefix = Path(scratch) / "model"
        try:
            sentencepiece.SentencePieceTrainer.train(
                sentence_iterator=iter(texts),
                model_prefix=str(prefix),
                model_type=kind,
                vocab_size=size,
                **settings,
            )
        except RuntimeError as error:
            raise _sentencepiece_error(str(error), kind, size) from None
        return SentencePieceVocab(prefix.with_suffix(".model").read_bytes(), kind)


def _sentencepiece_error(message: str, kind: str, size: int) -> Exception:
    """Turn sentencepiece's C++ check failures into one sentence about the user's choice."""
    if match := re.search(r"too high.*<= *(\d+)", message):
        return DataError(
            f"{kind} vocabulary size {size} is too large for this corpus: sentencepiece can "
            f"make at most {match[1]} pieces from it (choose a smaller size, or pass "
            "hard_vocab_limit=False to let the size shrink)"
        )
    if match := re.search(r"required_chars\. *\d+ vs (\d+)", message):
        return DataError(
            f"{kind} vocabulary size {size} is too small for this corpus: its characters "
            f"and the special tokens need at least {match[1]}"
        )
    if match := re.search(r"unknown field name \"(\w+)\"", message):
        return ConfigError(f"unknown sentencepiece option {match[1]!r}")
    return DataError(f"sentencepiece could not train a {kind} vocabulary: {message}")


def _count_tokens(kind, texts, size, options) -> Vocab:
    min_freq = options.pop("min_freq", 1)
    if options:
        raise ConfigError(f"unknown {kind} vocabulary options {sorted(options)}; options: "
                          "['min_freq']")
    if size is not None and size <= len(SPECIAL_PIECES):
        raise ConfigError(f"{kind} vocabulary size must be more than {len(SPECIAL_PIECES)} "
                          f"(the special tokens), got {size}")
    split = str.split if kind == "word" else list
    counts = Counter(piece for text in texts for piece in split(text))
    # Most frequent first; ties alphabetical so the same corpus always gives the same ids.
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    pieces = [p for p, n in ranked if n >= min_freq and p not in SPECIAL_PIECES]
    if size is not None:
        pieces = pieces[: size - len(SPECIAL_PIECES)]
    return TokenVocab([*SPECIAL_PIECES, *pieces], kind)


# To add a kind, write its trainer and add one line; `build_vocab` and the CLI read this table.
VOCAB_KINDS = {
    "bpe": _train_sentencepiece,
    "unigram": _train_sentencepiece,
    "word": _count_tokens,
    "char": _count_tokens,
}


def build_vocab(
    kind: str,
    texts: Iterable[str],
    *,
    size: int | None,
    directory: str | os.PathLike | None = None,
    name: str,
    **options,
) -> Vocab:
    """Train a vocabulary of `kind` on `texts`, save it as `directory/name.*` (None: do not
    save; `vocab.save(directory, name)` later) and return it.

    `size` counts every id including the 4 special ones; it is required for bpe/unigram and
    None means "no cap" for word/char. A joint vocabulary (shared by source and target, e.g.
    for tied embeddings) is built by passing both sides' texts; separate vocabularies by
    calling twice with different `name`s. Options: word/char take `min_freq` (default 1);
    bpe/unigram pass options to sentencepiece's trainer (e.g. `hard_vocab_limit=False`).
    """
    if kind not in VOCAB_KINDS:
        raise ConfigError(f"unknown vocabulary kind {kind!r}; options: {sorted(VOCAB_KINDS)}")
    texts = list(texts)  # iterated more than once; a list of references costs little
    if not any(text.strip() for text in texts):
        raise DataError(f"cannot build a {kind} vocabulary {name!r}: all texts are empty")
    if kind in ("bpe", "unigram") and size is None:
        raise ConfigError(f"a {kind} vocabulary needs a size")
    vocab = VOCAB_KINDS[kind](kind, texts, size, dict(options))
    if directory is not None:
        vocab.save(directory, name)
    return vocab


def load_vocab(directory: str | os.PathLike, name: str) -> Vocab:
    """Load the vocabulary saved as `directory/name.*` by `build_vocab` or `Vocab.save`."""
    path = Path(directory) / f"{name}.json"
    if not path.is_file():
        raise DataError(f"vocabulary not found: {path}")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
        kind = meta["kind"]
        if kind in ("bpe", "unigram"):
            return SentencePieceVocab((path.parent / meta["model"]).read_bytes(), kind)
        if kind in VOCAB_KINDS:
            return TokenVocab(meta["pieces"], kind)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as error:
        raise DataError(f"{path}: not a readable vocabulary ({error})") from None
    raise DataError(f"{path}: unknown vocabulary kind {kind!r}; options: {sorted(VOCAB_KINDS)}")


def display_pieces(vocab: Vocab, sentence: str) -> list[str]:
    """The pieces a model reads for `sentence`, without sentencepiece's word-start mark (kept
    when it is the whole piece), for labelling figures."""
    return [piece.removeprefix(WORD_START) or piece for piece in vocab.tokenize(sentence)]
