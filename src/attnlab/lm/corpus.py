"""A language model's text: the vocabulary, encoded sentences, and padded batches."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch.nn.utils.rnn import pad_sequence

from attnlab.data import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    TensorBatch,
    Vocab,
    build_vocab,
    load_vocab,
    read_lines,
)
from attnlab.errors import DataError

from .config import TextConfig

VOCAB_NAME = "vocab"  # the run directory's vocab.json (+ vocab.model for sentencepiece)
VOCAB_FILES = tuple(f"{VOCAB_NAME}.{ext}" for ext in ("json", "model", "vocab"))


def load_or_build_vocab(config: TextConfig, sentences: list[str],
                        run_dir: Path | None) -> Vocab:
    """The run's vocabulary (DataError if it has none), or with run_dir None one trained on
    `sentences` in memory (`vocab.save(directory, VOCAB_NAME)` writes it)."""
    if run_dir is not None:
        return load_vocab(run_dir, VOCAB_NAME)
    return build_vocab(config.vocab, sentences, size=config.vocab_size, name=VOCAB_NAME)


@dataclass
class EncodedText:
    """Token ids of the kept sentences (no BOS/EOS) and what was dropped."""

    sentences: list[list[int]]
    total: int
    empty: int = 0
    too_long: int = 0
    max_len: int | None = None

    def summary(self) -> str:
        """One line, e.g. 'kept 28990 of 29000 sentences (3 longer than 100 pieces)'."""
        reasons = [f"{self.empty} empty"] if self.empty else []
        if self.too_long:
            reasons.append(f"{self.too_long} longer than {self.max_len} pieces")
        why = f" ({', '.join(reasons)})" if reasons else ""
        return f"kept {len(self.sentences)} of {self.total} sentences{why}"


def encode_text(lines: list[str], vocab: Vocab, max_len: int | None) -> EncodedText:
    """Encode each line; drop empty ones and those over max_len pieces (None = keep all)."""
    encoded = EncodedText([], len(lines), max_len=max_len)
    for line in lines:
        ids = vocab.encode(line) if line.strip() else []
        if not ids:
            encoded.empty += 1
        elif max_len is not None and len(ids) > max_len:
            encoded.too_long += 1
        else:
            encoded.sentences.append(ids)
    return encoded


def read_text(config: TextConfig, name: str) -> list[str]:
    return read_lines(config.path(name))


def read_training_text(config: TextConfig) -> list[str]:
    """The training lines; DataError naming the file when no line has text."""
    lines = read_text(config, config.train)
    if not any(line.strip() for line in lines):
        what = f"none of its {len(lines)} lines has text" if lines else "the file is empty"
        raise DataError(f"no training text in {config.path(config.train)}: {what}")
    return lines


def check_encoded(encoded: EncodedText, config: TextConfig, name: str,
                  kind: str) -> EncodedText:
    """`encoded` (the `kind` text: training, validation) when it kept a sentence; else
    DataError naming the file and why nothing was kept."""
    if encoded.sentences:
        return encoded
    path = config.path(name)
    if not encoded.total:
        why = "the file is empty"
    elif encoded.too_long:
        why = f"{encoded.summary()}; raise data.max_len"
    else:
        first = "first " if kind == "validation" and encoded.total == config.valid_sentences else ""
        why = f"none of its {first}{encoded.total} lines has text"
    raise DataError(f"no {kind} text in {path}: {why}")


@dataclass
class TextBatch(TensorBatch):
    """B sentences, T = longest + 1: inputs (B, T) = <s> w_1..w_n, targets (B, T) =
    w_1..w_n </s>, mask (B, T) bool (True = real), num_target_tokens = mask.sum()."""

    inputs: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor
    num_target_tokens: int
    indices: list[int]


def collate_text(sentences: list[list[int]], indices: list[int] | None = None) -> TextBatch:
    """Right-pad sentences (ids without BOS/EOS) into a TextBatch."""
    inputs = pad_sequence([torch.tensor([BOS_ID, *s]) for s in sentences], batch_first=True,
                          padding_value=PAD_ID)
    targets = pad_sequence([torch.tensor([*s, EOS_ID]) for s in sentences], batch_first=True,
                           padding_value=PAD_ID)
    lengths = torch.tensor([len(s) + 1 for s in sentences])
    mask = torch.arange(inputs.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)  # (B, T)
    return TextBatch(inputs, targets, mask, int(mask.sum()),
                     list(range(len(sentences))) if indices is None else list(indices))
