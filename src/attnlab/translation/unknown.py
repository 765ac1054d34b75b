"""Unknown-word replacement through attention (Luong et al. 2015, sec. 4, "unk replace"; as
OpenNMT-py's -replace_unk and fairseq's --replace-unk): each `<unk>` of a translation becomes
the source unit it attends to most, or that unit's entry in a dictionary.

What counts as unknown is the `<unk>` id, whatever the vocabulary: a word outside a word
vocabulary, a character outside a character one, and with sentencepiece (bpe, unigram) an
`<unk>` piece, which stands for characters the vocabulary cannot spell (seen too rarely or
never in training; consecutive ones are one piece). The source unit copied is the most
attended source piece as written in the input (a word, a character, or the surface of a
sentencepiece piece without its word-start mark; a bare mark gives its whole word); "</s>" is
never copied. The dictionary is looked up with that unit. Only `text` changes: the pieces,
words and attention stay the model's, so a figure shows what it wrote.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from attnlab.data import SPECIAL_PIECES, UNK_ID, Vocab
from attnlab.data.vocab import WORD_START
from attnlab.errors import DataError

from .labels import words
from .translate import TranslationResult

UNKNOWN = SPECIAL_PIECES[UNK_ID]  # "<unk>": how every vocabulary's decode writes it


def read_dictionary(path: str | os.PathLike) -> dict[str, str]:
    """A translation dictionary: one `source target` pair a line, separated by whitespace (a
    tab or spaces; the target may hold spaces after a tab); blank lines and lines starting with
    '#' are skipped; the first entry of a source word wins (as fairseq's)."""
    try:
        with open(path, encoding="utf-8") as file:
            lines = file.read().splitlines()
    except FileNotFoundError:
        raise DataError(f"dictionary file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DataError(f"cannot read the dictionary {path}: {error}") from None
    entries: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t", 1) if "\t" in line else line.split(None, 1)
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise DataError(f"{path} line {number}: expected 'source target', got {line!r}")
        entries.setdefault(parts[0].strip(), parts[1].strip())
    return entries


@dataclass(frozen=True)
class UnknownWords:
    """Replace `<unk>` outputs by what they attend to (see the module docstring)."""

    source_vocab: Vocab
    dictionary: Mapping[str, str] = field(default_factory=dict)

    def replace(self, result: TranslationResult) -> TranslationResult:
        """The result with the `<unk>`s of its text replaced, its n-best alternatives too
        (changed in place: results are fresh from translate)."""
        for hypothesis in result.hypotheses:
            hypothesis.text = self.replaced_text(hypothesis)
        return result

    def replaced_text(self, result: TranslationResult) -> str:
        """The text with each `<unk>` token's replacement, in order."""
        unknown = [j for j, token in enumerate(result.tokens) if token == UNK_ID]
        if not unknown:
            return result.text
        if result.attention is None:
            raise DataError("--replace-unk copies the source word an <unk> attends to most, "
                            "and this model has no attention")
        parts = result.text.split(UNKNOWN)
        if len(parts) != len(unknown) + 1:  # the text spells <unk> otherwise: leave it
            return result.text
        copied = [self.copy(result, j) for j in unknown]
        return parts[0] + "".join(unit + rest for unit, rest in zip(copied, parts[1:],
                                                                    strict=True))

    def copy(self, result: TranslationResult, row: int) -> str:
        """What output position `row` (an <unk>) becomes: the most attended source unit, or
        its dictionary entry."""
        pieces = result.source_pieces
        attention = np.asarray(result.attention)[row]  # (S pieces,)
        real = len(pieces) - (pieces[-1:] == ["</s>"])  # never copy "</s>"
        position = int(np.argmax(attention[:real])) if real else 0
        unit = pieces[position].replace(WORD_START, " ").strip() if real else ""
        if not unit and real:  # a bare word-start mark: its word
            texts, word_of = words(self.source_vocab, pieces)
            unit = texts[word_of[position]]
        return self.dictionary.get(unit, unit)
