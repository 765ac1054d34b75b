"""The built-in dates task: dates written in eight languages -> ISO 8601, with gold alignments.

Which dates: a `DateWorld`, by default years 1000-2099 (the years people type). Half the dates are
drawn uniformly from 1950-2049 (the years two-digit years stand for, and those typed most), half
uniformly from the whole range, so the model sees every century without losing the recent ones;
a range inside 1950-2049 is drawn uniformly. `DateWorld(1950, 2049, not_dates=0)` is the task as
it was first made, exactly (the published `dates` compare results were made on it).

Each date is written in a form drawn uniformly from `PATTERNS[language]` (CLDR's patterns plus
hand-written ones, see `date_formats`) for a language drawn uniformly from `LANGUAGES`, in a
random case; the target is `YYYY-MM-DD`. A source never has two readings: a pattern with a numeric
day and month before the year ("3/5/2024") is used only for dates whose day is over 12 or equals
the month, and a two-digit year ("24") only for 1950-2049. A share of the examples
(`DateWorld.not_dates`, 5% by default) are sources that are no date (`not_dates`), whose target
is "not a date" and which have no links. Sources are distinct within one `generate_dates` call,
so no test source repeats a training one.

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
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import babel

from attnlab.errors import ConfigError
from attnlab.files import writing

from .date_formats import (
    CASES,
    LANGUAGES,
    PATTERNS,
    TWO_DIGIT_YEARS,
    Field,
    order_ambiguous,
    render,
    two_digit_year,
)
from .not_dates import NOT_A_DATE, draw_not_a_date

RECENT_SHARE = 0.5  # of the dates drawn from TWO_DIGIT_YEARS when the range reaches beyond it
CASE_WEIGHTS = (0.7, 0.1, 0.1, 0.1)  # mostly as CLDR writes it; same order as CASES
DEFAULT_SPLITS = {"train": 0.8, "val": 0.1, "test": 0.1}
TARGET_FIELDS = {"year": (0, 4), "month": (5, 7), "day": (8, 10)}  # [start, end) in YYYY-MM-DD
ALIGNMENT_SUMMARY = (  # the module docstring's rules in one paragraph, for meta.json
    "sure links i-j (source character i, target character j, 0-based): a numeric source field "
    "aligns with its target field right to left, digit by digit; target digits with no source "
    "digit of their own (padding zero, inferred century) and month names align to every "
    "character of the source field; target hyphens, weekdays and literals are unaligned; a "
    "source that is no date has no links"
)


@dataclass(frozen=True)
class DateWorld:
    """Which examples the task holds: dates of the years first_year..last_year (four digits
    each), drawn as the module docstring says, and a share `not_dates` of sources that are no
    date (target NOT_A_DATE)."""

    first_year: int = 1000
    last_year: int = 2099
    not_dates: float = 0.05

    def __post_init__(self) -> None:
        if not 1000 <= self.first_year <= self.last_year <= 9999:
            raise ConfigError(f"the years must be four-digit years, the first not after the "
                              f"last, got {self.first_year}-{self.last_year}")
        if not (math.isfinite(self.not_dates) and 0 <= self.not_dates <= 0.5):
            raise ConfigError(f"the share of sources that are not dates must be from 0 to 0.5, "
                              f"got {self.not_dates}")

    @property
    def dates(self) -> tuple[datetime.date, datetime.date]:
        return datetime.date(self.first_year, 1, 1), datetime.date(self.last_year, 12, 31)

    @property
    def recent(self) -> tuple[datetime.date, datetime.date] | None:
        """The part of the range in TWO_DIGIT_YEARS, drawn from more often; None when the range
        lies inside it (all drawn uniformly) or outside it."""
        first, last = max(self.first_year, TWO_DIGIT_YEARS[0]), min(self.last_year,
                                                                    TWO_DIGIT_YEARS[1])
        if first > last or (first, last) == (self.first_year, self.last_year):
            return None
        return datetime.date(first, 1, 1), datetime.date(last, 12, 31)

    def describe(self) -> str:
        """"dates of 1000-2099 (half of them 1950-2049) and 5% not dates"."""
        text = f"dates of {self.first_year}-{self.last_year}"
        if (recent := self.recent) is not None:
            text += f" ({RECENT_SHARE:.0%} of them {recent[0].year}-{recent[1].year})"
        share = f"{100 * self.not_dates:.3g}%"
        return text + (f" and {share} not dates" if self.not_dates else "")


WIDE = DateWorld()  # the default: the years people type, and sources that are no date
FIRST_WORLD = DateWorld(1950, 2049, not_dates=0.0)  # the task as first made (compare dates)


def parse_years(text: str) -> tuple[int, int]:
    """"1950-2049" -> (1950, 2049); a ConfigError sentence for anything else."""
    first, dash, last = text.partition("-")
    if not (dash and first.strip().isdigit() and last.strip().isdigit()):
        raise ConfigError(f"years must be written FIRST-LAST, e.g. 1000-2099, got {text!r}")
    years = int(first), int(last)
    DateWorld(*years)  # the same checks as the world's own
    return years


@dataclass(frozen=True)
class DateExample:
    """One source string, its ISO target and the gold links (source char i, target char j).

    `language` and `pattern` say how the source was written; `fields` maps 'year', 'month',
    'day' (and 'weekday' when present) to their character spans in the source. A source that
    is no date has the target NOT_A_DATE, no links, no fields and language and pattern "".
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


def _draw(rng: random.Random, world: DateWorld) -> DateExample:
    # FIRST_WORLD draws nothing the first generator did not, so it makes the same examples.
    if world.not_dates and rng.random() < world.not_dates:
        return DateExample(draw_not_a_date(rng), NOT_A_DATE, [], "", "", {})
    first, last = world.dates
    if (recent := world.recent) is not None and rng.random() < RECENT_SHARE:
        first, last = recent
    date = first + datetime.timedelta(days=rng.randrange((last - first).days + 1))
    language = rng.choice(LANGUAGES)
    pattern = rng.choice(PATTERNS[language])
    # Redraw the form, not the date, so dates keep their distribution; forms with a month name
    # and a four-digit year always qualify.
    while not _readable(pattern, date):
        pattern = rng.choice(PATTERNS[language])
    case = rng.choices(CASES, weights=CASE_WEIGHTS)[0]
    rendered = render(date, pattern, language, case)
    return DateExample(rendered.text, date.isoformat(), gold_alignment(rendered.fields),
                       language, pattern, rendered.fields)


def _readable(pattern: str, date: datetime.date) -> bool:
    """Whether `pattern` writes `date` with one reading (module docstring)."""
    if order_ambiguous(pattern) and date.day <= 12 and date.day != date.month:
        return False
    return not two_digit_year(pattern) or TWO_DIGIT_YEARS[0] <= date.year <= TWO_DIGIT_YEARS[1]


def generate_dates(size: int, seed: int, world: DateWorld = WIDE) -> list[DateExample]:
    """`size` examples of `world` with distinct sources; the same (size, seed, world) and Babel
    version give the same list on every machine."""
    if size < 1:
        raise ConfigError(f"dates size must be at least 1, got {size}")
    rng = random.Random(seed)
    examples: list[DateExample] = []
    seen: set[str] = set()
    # Collisions are rare (millions of distinct sources); the bound only stops a runaway loop.
    for _ in range(20 * size + 1000):
        example = _draw(rng, world)
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
                splits: Mapping[str, float] = DEFAULT_SPLITS,
                world: DateWorld = WIDE) -> dict[str, int]:
    """Generate `size` examples of `world` and write them as consecutive splits under `dest`.

    Writes `{split}.src`, `{split}.tgt`, `{split}.align` per split and `meta.json` (which
    records the world: its date range, its draw and its share of sources that are no date).
    Returns the number of examples per split.
    """
    sizes = _split_sizes(size, splits)
    examples = generate_dates(size, seed, world)
    dest = Path(dest)
    meta = _meta(size, seed, sizes, world)
    with writing(dest):  # a full disk or a read-only folder: one sentence naming dest
        dest.mkdir(parents=True, exist_ok=True)
        _write_splits(dest, sizes, examples)
        (dest / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n",
                                        encoding="utf-8")
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


def _meta(size: int, seed: int, sizes: dict[str, int], world: DateWorld) -> dict:
    """meta.json: how the task was made."""
    first, last = world.dates
    recent = world.recent
    return {
        "task": "dates: human-readable date -> ISO 8601 YYYY-MM-DD",
        "world": world.describe(),
        "size": size,
        "seed": seed,
        "splits": sizes,
        "date_range": [first.isoformat(), last.isoformat()],
        "recent_range": None if recent is None else [d.isoformat() for d in recent],
        "recent_share": None if recent is None else RECENT_SHARE,
        "two_digit_years": list(TWO_DIGIT_YEARS),
        "not_dates": {"share": world.not_dates, "target": NOT_A_DATE},
        "languages": list(LANGUAGES),
        "files": {"src": "source date, one a line", "tgt": "ISO target, one a line",
                  "align": "Pharaoh 'i-j': 0-based source character i, target character j"},
        "alignment": ALIGNMENT_SUMMARY,
        "babel_version": babel.__version__,
        "patterns": {language: list(PATTERNS[language]) for language in LANGUAGES},
    }
