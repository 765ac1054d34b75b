"""How a calendar date becomes a human-readable source string, field by field.

A *pattern* is a CLDR date pattern (the syntax of Babel's `format_date`): `y` year, `M`/`L` month
(format / stand-alone context), `d` day, `E` weekday, and quoted or non-letter literals. The
catalogue `PATTERNS[language]` holds, for each of `LANGUAGES`, CLDR's own full/long/medium/short
patterns and the y-M-d "skeleton" patterns of that locale (so the forms are the ones real software
prints), plus hand-written forms for other orders, separators and two-digit years.

We render patterns ourselves instead of calling `format_date`, because the gold alignment needs to
know which source characters came from which field. `render` returns the string and, per field,
its character span:

    year    'y'/'yyyy' -> "2024"; 'yy' -> "24", only for TWO_DIGIT_YEARS (1950..2049: 50..99
            mean 19xx, 00..49 mean 20xx); other years are written with all four digits
    month   'M' -> "3"; 'MM' -> "03"; 'MMM' -> abbreviated name; 'MMMM' -> wide name
    day     'd' -> "5"; 'dd' -> "05"
    weekday 'E'..'EEE' -> abbreviated name; 'EEEE' -> wide name (always the date's real weekday)

Names come from Babel's CLDR tables (`get_month_names`, `get_day_names`). Narrow widths
('MMMMM', 'EEEEE') are left out: "M" for both March and May would make a source ambiguous.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from functools import cache
from typing import Literal

from babel import Locale
from babel.dates import get_date_format, get_day_names, get_month_names, tokenize_pattern

LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "zh")
# The years a two-digit year stands for: "24" is 2024 and "89" 1989, as people read them today.
TWO_DIGIT_YEARS = (1950, 2049)
# "cldr" as the tables write it; "lower"/"upper" the whole string; "capitalized" each name.
CASES = ("cldr", "lower", "upper", "capitalized")

# Forms CLDR's standard and skeleton patterns miss: other orders, separators, two-digit years,
# a weekday in another place. Numeric forms are day-first in all languages but en (month-first)
# and zh (year-first); year-first ones are shared by all.
_DAY_FIRST_NUMERIC = ("d/M/y", "dd/MM/yy", "d.M.y", "dd.MM.y", "dd.MM.yy", "d-M-y", "dd-MM-y")
_YEAR_FIRST_NUMERIC = ("y-MM-dd", "y/M/d", "y.MM.dd", "y/MM/dd")
EXTRA_PATTERNS = {
    "en": ("M/d/y", "MM/dd/y", "M/d/yy", "MM-dd-y", "EEEE d MMMM y", "d MMM y", "MMMM d y",
           "EEE, d MMM y", "MMMM dd, y", "EEEE, MMM d, y", "d MMMM, y", "MMM d, yy"),
    "de": ("EEEE, dd.MM.y", "d.MMMM y", "dd. MMM y", "EEE, d. MMM yy", "EEEE, 'den' d. MMMM y"),
    "fr": ("'le' d MMMM y", "EEEE, d MMMM y", "d MMM yy", "'le' EEEE d MMMM y", "EEE dd/MM/yy"),
    "es": ("EEEE d 'de' MMMM 'de' y", "d-MMM-y", "d 'de' MMMM, y", "EEE, d MMM yy"),
    "it": ("EEEE, d MMMM y", "d MMMM, y", "EEE d MMM yy", "d-MMM-y"),
    "pt": ("d/MMM/y", "EEEE, d 'de' MMMM 'de' y", "d MMMM y", "EEE, d MMM yy"),
    "nl": ("EEEE d MMMM y", "d-MMM-y", "EEEE, d MMMM y", "d MMM yy", "EEE d MMM y"),
    "zh": ("y-M-d", "y.M.d", "y年M月d日 EEEE", "y年MM月dd日", "EEEE y年M月d日", "y年LLLLd日",
           "y年M月d日 E", "y年M月d日（EEEE）"),
}

FIELD_NAMES = {"y": "year", "M": "month", "L": "month", "d": "day", "E": "weekday"}
# Letter counts `render` handles; others (narrow names, 'ddd') make a pattern unsupported.
FIELD_COUNTS = {
    "y": {1, 2, 4}, "M": {1, 2, 3, 4}, "L": {1, 2, 3, 4}, "d": {1, 2}, "E": {1, 2, 3, 4},
}
NameWidth = Literal["abbreviated", "wide"]  # the CLDR name widths used here
NameContext = Literal["format", "stand-alone"]  # a name inside a date, or standing alone
_NAME_WIDTHS: dict[int, NameWidth] = {1: "abbreviated", 2: "abbreviated", 3: "abbreviated",
                                      4: "wide"}


@dataclass(frozen=True)
class Field:
    """Where one date field sits in a rendered source: characters [start, end)."""

    start: int
    end: int
    numeric: bool  # digits (right-aligned to the target) or a name (aligned as a whole)


@dataclass(frozen=True)
class Rendered:
    """A rendered source string and its fields, keyed by 'year', 'month', 'day', 'weekday'."""

    text: str
    fields: dict[str, Field]


def supported(pattern: str) -> bool:
    """True if every field is one `render` knows, year/month/day each appear once, and a
    two-digit year comes last (so "05.03.24" never reads as year-first)."""
    fields = _fields(pattern)
    if any(count not in FIELD_COUNTS.get(letter, ()) for letter, count in fields):
        return False
    names = [FIELD_NAMES[letter] for letter, _ in fields]
    if sorted(n for n in names if n != "weekday") != ["day", "month", "year"] or len(names) > 4:
        return False
    short_year = ("y", 2) in fields
    return not short_year or [n for n in names if n != "weekday"][-1] == "year"


def order_ambiguous(pattern: str) -> bool:
    """True if day and month are both digits and the year is not first: "3/5/2024" reads as
    3 May or March 5. `generate_dates` uses such a pattern only when the day is over 12 or
    equals the month, so every source has exactly one reading."""
    fields = _fields(pattern)
    numeric = {FIELD_NAMES[letter] for letter, count in fields if letter in "MLd" and count <= 2}
    first = next(letter for letter, _ in fields if letter != "E")
    return numeric == {"month", "day"} and first != "y"


def two_digit_year(pattern: str) -> bool:
    """True if the pattern writes the year with two digits ('yy')."""
    return ("y", 2) in _fields(pattern)


def _fields(pattern: str) -> list[tuple[str, int]]:
    """The (letter, count) of each field of a CLDR pattern, in order."""
    # tokenize_pattern gives ("field", (letter, count)) and ("chars", literal text) tokens.
    return [value for _, value in tokenize_pattern(pattern) if isinstance(value, tuple)]


@cache
def patterns_for(language: str) -> tuple[str, ...]:
    """CLDR standard + skeleton patterns of `language`, the hand-written extras and the numeric
    forms of its order; sorted, so a seed draws the same forms on every machine."""
    locale = Locale.parse(language)
    found = {str(get_date_format(width, locale).pattern)
             for width in ("full", "long", "medium", "short")}
    for skeleton, pattern in locale.datetime_skeletons.items():
        if set(skeleton) <= set("yMLdE"):
            found.add(str(getattr(pattern, "pattern", pattern)))
    found.update(EXTRA_PATTERNS[language])
    if language not in ("en", "zh"):
        found.update(_DAY_FIRST_NUMERIC)
    found.update(_YEAR_FIRST_NUMERIC)
    return tuple(sorted(p for p in found if supported(p)))


PATTERNS = {language: patterns_for(language) for language in LANGUAGES}


@cache
def month_names(language: str, width: NameWidth, context: NameContext) -> dict[int, str]:
    """Month number (1..12) -> name, from CLDR."""
    return dict(get_month_names(width, context, language).items())


@cache
def day_names(language: str, width: NameWidth, context: NameContext) -> dict[int, str]:
    """Weekday (0 = Monday, as `date.weekday()`) -> name, from CLDR."""
    return dict(get_day_names(width, context, language).items())


def _field_text(date: datetime.date, letter: str, count: int, language: str) -> tuple[str, bool]:
    """The text of one field and whether it is numeric."""
    if letter == "y":
        if count == 2 and not TWO_DIGIT_YEARS[0] <= date.year <= TWO_DIGIT_YEARS[1]:
            raise ValueError(f"{date.year} cannot be written with two digits: they read as "
                             f"{TWO_DIGIT_YEARS[0]}-{TWO_DIGIT_YEARS[1]}")
        return (f"{date.year % 100:02d}" if count == 2 else str(date.year)), True
    if letter == "d":
        return (f"{date.day:02d}" if count == 2 else str(date.day)), True
    if letter in "ML" and count <= 2:
        return (f"{date.month:02d}" if count == 2 else str(date.month)), True
    if letter in "ML":
        context: NameContext = "format" if letter == "M" else "stand-alone"
        return month_names(language, _NAME_WIDTHS[count], context)[date.month], False
    return day_names(language, _NAME_WIDTHS[count], "format")[date.weekday()], False


def _apply_case(text: str, case: str) -> str:
    if case == "lower":
        return text.lower()
    if case == "upper":
        return text.upper()
    if case == "capitalized":
        return text[:1].upper() + text[1:]
    return text


def render(date: datetime.date, pattern: str, language: str, case: str = "cldr") -> Rendered:
    """Write `date` in `pattern` with `language`'s names, recording each field's span.

    `case` changes names and literals after rendering; spans are measured on the final text, so a
    case change that alters length (none in these locales' tables) would still be tracked.
    """
    pieces: list[str] = []
    fields: dict[str, Field] = {}
    position = 0
    for _, value in tokenize_pattern(pattern):
        if isinstance(value, str):  # a "chars" token: literal text; else a field's (letter, count)
            # CLDR literals may hold no-break spaces; one-line-per-example files want plain ones.
            text = "".join(" " if c.isspace() else c for c in value)
            text = text if case == "capitalized" else _apply_case(text, case)
        else:
            letter, count = value
            text, numeric = _field_text(date, letter, count, language)
            text = _apply_case(text, case)
            fields[FIELD_NAMES[letter]] = Field(position, position + len(text), numeric)
        pieces.append(text)
        position += len(text)
    return Rendered("".join(pieces), fields)
