"""The built-in dates task: dates written in eight languages -> ISO 8601, with gold alignments.

Each example is one date drawn uniformly from 1950-01-01..2049-12-31, written in a form drawn
uniformly from `PATTERNS[language]` (CLDR's patterns plus hand-written ones, see `date_formats`) for
a language drawn uniformly from `LANGUAGES`, in a random case; the target is always `YYYY-MM-DD`.
A source never has two readings: a pattern with a numeric day and month before the year
("3/5/2024") is used only for dates whose day is over 12 or equals the month. Sources are distinct
within one `generate_dates` call, so no test source repeats a training one.

Gold alignment: pairs (i, j), source CHARACTER i (0-based index into the Python str) produces
target character j. The target is laid out as Y0 Y1 Y2 Y3 - M0 M1 - D0 D1 (j = 0-3, 5-6, 8-9).
  * A numeric source field aligns with its target field right to left, digit by digit: "2024"
    one to one, "03" one to one, the "5" of a day to the "5" of "05", "24" to the "24" of "2024".
    So every such link joins two equal characters.
  * A target digit with no source digit of its own (the padding "0" of a one-digit day or month,
    the inferred century "19"/"20" of a two-digit year) aligns to every character of the field.
  * A month name ("März", "mar.", "三月") aligns as a whole: both target month digits to every
    character of the name.
  * Target hyphens and source weekday and literal characters are unaligned: the hyphens come from
    no source character, and the weekday is implied by the date.
All links are sure links (no possible ones), so AER against them is 1 - F1 of the links.

Files (`write_dates`): `{split}.src`, `{split}.tgt`, `{split}.align`, one example a line, UTF-8;
`.align` is Pharaoh format, space-separated `i-j` sorted by (i, j); `meta.json` describes the run.
"""

from __future__ import annotations

import datetime
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import babel

from attnlab.errors import ConfigError
from attnlab.files import writing

from .date_formats import CASES, LANGUAGES, PATTERNS, Field, order_ambiguous, render

FIRST_DATE = datetime.date(1950, 1, 1)
LAST_DATE = datetime.date(2049, 12, 31)
CASE_WEIGHTS = (0.7, 0.1, 0.1, 0.1)  # mostly as CLDR writes it; same order as CASES
DEFAULT_SPLITS = {"train": 0.8, "val": 0.1, "test": 0.1}
TARGET_FIELDS = {"year": (0, 4), "month": (5, 7), "day": (8, 10)}  # [start, end) in YYYY-MM-DD
ALIGNMENT_SUMMARY = (  # the module docstring's rules in one paragraph, for meta.json
    "sure links i-j (source character i, target character j, 0-based): a numeric source field "
    "aligns with its target field right to left, digit by digit; target digits with no source "
    "digit of their own (padding zero, inferred century) and month names align to every "
    "character of the source field; target hyphens, weekdays and literals are unaligned"
)


@dataclass(frozen=True)
class DateExample:
    """One source string, its ISO target and the gold links (source char i, target char j).

    `language` and `pattern` say how the source was written; `fields` maps 'year', 'month',
    'day' (and 'weekday' when present) to their character spans in the source.
    """

    source: str
    target: str
    alignment: list[tuple[int, int]]
    language: str
    pattern: str
    fields: dict[str, Field]


def gold_alignment(fields: Mapping[str, Field]) -> list[tuple[int, int]]:
    """The links defined in the module docstring, sorted by (i, j)."""
    links = []
    for name, (target_start, target_end) in TARGET_FIELDS.items():
        field = fields[name]
        whole = range(field.start, field.end)
        own_digits = field.end - field.start if field.numeric else 0
        for offset in range(target_end - target_start):
            from_right = target_end - target_start - offset  # 1 = last digit of the field
            j = target_start + offset
            if from_right <= own_digits:
                links.append((field.end - from_right, j))
            else:
                links.extend((i, j) for i in whole)
    return sorted(links)


def _draw(rng: random.Random) -> DateExample:
    date = FIRST_DATE + datetime.timedelta(days=rng.randrange((LAST_DATE - FIRST_DATE).days + 1))
    language = rng.choice(LANGUAGES)
    pattern = rng.choice(PATTERNS[language])
    # Redraw the form, not the date, so dates stay uniform; name forms always qualify.
    while order_ambiguous(pattern) and date.day <= 12 and date.day != date.month:
        pattern = rng.choice(PATTERNS[language])
    case = rng.choices(CASES, weights=CASE_WEIGHTS)[0]
    rendered = render(date, pattern, language, case)
    return DateExample(rendered.text, date.isoformat(), gold_alignment(rendered.fields),
                       language, pattern, rendered.fields)


def generate_dates(size: int, seed: int) -> list[DateExample]:
    """`size` examples with distinct sources; the same (size, seed) and Babel version give the
    same list on every machine."""
    if size < 1:
        raise ConfigError(f"dates size must be at least 1, got {size}")
    rng = random.Random(seed)
    examples: list[DateExample] = []
    seen: set[str] = set()
    # Collisions are rare (millions of distinct sources); the bound only stops a runaway loop.
    for _ in range(20 * size + 1000):
        example = _draw(rng)
        if example.source not in seen:
            seen.add(example.source)
            examples.append(example)
            if len(examples) == size:
                return examples
    raise ConfigError(f"could not draw {size} distinct dates; ask for fewer with --size")


def format_alignment(links: list[tuple[int, int]]) -> str:
    """Pharaoh line: "0-0 1-1 ...", in the order given (the gold is written sorted by (i, j));
    data sits below translation, so the dates gold is read back by
    attnlab.translation.alignment.read_links, the one Pharaoh reader."""
    return " ".join(f"{i}-{j}" for i, j in links)


def _split_sizes(size: int, splits: Mapping[str, float]) -> dict[str, int]:
    if not splits or any(p < 0 for p in splits.values()) or abs(sum(splits.values()) - 1) > 1e-6:
        raise ConfigError(
            f"split proportions must be non-negative and sum to 1, got {dict(splits)}"
        )
    names = list(splits)
    sizes = {name: round(size * splits[name]) for name in names[:-1]}
    sizes[names[-1]] = size - sum(sizes.values())  # the last split takes the rounding remainder
    if sizes[names[-1]] < 0:
        raise ConfigError(f"split proportions {dict(splits)} do not fit size {size}")
    return sizes


def write_dates(dest: str | Path, *, size: int = 20000, seed: int = 1,
                splits: Mapping[str, float] = DEFAULT_SPLITS) -> dict[str, int]:
    """Generate `size` examples and write them as consecutive splits under `dest`.

    Writes `{split}.src`, `{split}.tgt`, `{split}.align` per split and `meta.json`.
    Returns the number of examples per split.
    """
    sizes = _split_sizes(size, splits)
    examples = generate_dates(size, seed)
    dest = Path(dest)
    with writing(dest):  # a full disk or a read-only folder: one sentence naming dest
        dest.mkdir(parents=True, exist_ok=True)
        _write_splits(dest, sizes, examples)
        (dest / "meta.json").write_text(json.dumps(_meta(size, seed, sizes), ensure_ascii=False,
                                                   indent=2) + "\n", encoding="utf-8")
    return sizes


def _write_splits(dest: Path, sizes: dict[str, int], examples: list[DateExample]) -> None:
    """{split}.src / .tgt / .align for consecutive slices of `examples`."""
    start = 0
    for name, count in sizes.items():
        part = examples[start:start + count]
        start += count
        for suffix, lines in (("src", [e.source for e in part]), ("tgt", [e.target for e in part]),
                              ("align", [format_alignment(e.alignment) for e in part])):
            text = "".join(line + "\n" for line in lines)
            (dest / f"{name}.{suffix}").write_text(text, encoding="utf-8", newline="\n")


def _meta(size: int, seed: int, sizes: dict[str, int]) -> dict:
    """meta.json: how the task was made."""
    return {        "task": "dates: human-readable date -> ISO 8601 YYYY-MM-DD",
        "size": size,
        "seed": seed,
        "splits": sizes,
        "date_range": [FIRST_DATE.isoformat(), LAST_DATE.isoformat()],
        "languages": list(LANGUAGES),
        "files": {"src": "source date, one a line", "tgt": "ISO target, one a line",
                  "align": "Pharaoh 'i-j': 0-based source character i, target character j"},
        "alignment": ALIGNMENT_SUMMARY,
        "babel_version": babel.__version__,
        "patterns": {language: list(PATTERNS[language]) for language in LANGUAGES},
    }
