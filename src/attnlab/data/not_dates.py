"""Sources that are not dates, for the dates task: their target is NOT_A_DATE.

A model trained on dates alone writes a date for anything ("hello" -> 2071-07-07, "\\x00\\x01"
-> 2000-00-01, with scores near those of real dates). A small share of these in the training
data teaches it to answer "not a date" instead. Three kinds, drawn equally often:

    names        1-3 place or language names from CLDR in one of the task's languages
                 ("Afrique du Sud", "阿法尔语 Welt")
    name + number  a name and a number of 1-4 digits ("Nordamerika 1987"): a year alone is no date
    characters   1-12 characters: ASCII, control characters, letters and symbols of other
                 scripts, emoji ("\\x00\\x01", "q#Ж→")

Every character pool is a fixed list of code points (not Unicode categories, which change with
Python's Unicode version), so a seed draws the same sources on every machine with the same Babel.
No source holds a line break or a space other than " " inside it: one example a line.
"""

from __future__ import annotations

import random
from functools import cache

from babel import Locale

from .date_formats import LANGUAGES

NOT_A_DATE = "not a date"  # the target of every source that is not a date
MAX_LENGTH = 40  # characters; well under the dates config's max_len (60)


def _span(first: int, last: int) -> list[str]:
    return [chr(c) for c in range(first, last + 1)]


ASCII = _span(0x21, 0x7E)
# C0 controls and DEL without the ones that are whitespace or break a line (\t..\r, \x1c..\x1f).
CONTROL = [*_span(0x00, 0x08), *_span(0x0E, 0x1B), "\x7f"]
# Blocks of other scripts, each drawn as often: Latin-1 letters, Greek, Cyrillic, arrows, box
# drawing, hiragana, CJK ideographs, emoji.
OTHER_SCRIPTS = (_span(0xC0, 0xFF), [*_span(0x391, 0x3A1), *_span(0x3A3, 0x3C9)],
                 _span(0x410, 0x44F), _span(0x2190, 0x21FF), _span(0x2500, 0x257F),
                 _span(0x3041, 0x3096), _span(0x4E00, 0x9FFF), _span(0x1F600, 0x1F64F))
ASCII_SHARE, CONTROL_SHARE = 0.6, 0.2  # of the characters; other scripts have the rest


@cache
def names(language: str) -> tuple[str, ...]:
    """CLDR's territory and language names in `language`, without digits; sorted, so a seed
    draws the same ones on every machine."""
    locale = Locale.parse(language)
    found = {" ".join(name.split()) for name in (*locale.territories.values(),
                                                  *locale.languages.values())}
    return tuple(sorted(n for n in found if n and len(n) <= 20
                        and not any(c.isdigit() for c in n)))


def draw_not_a_date(rng: random.Random) -> str:
    """One source that is no date, of one of the three kinds (module docstring)."""
    kind = rng.randrange(3)
    if kind == 2:
        return "".join(_character(rng) for _ in range(rng.randint(1, 12)))
    pool = names(rng.choice(LANGUAGES))
    words = [rng.choice(pool) for _ in range(rng.randint(1, 3 - kind))]
    if kind == 1:
        number = rng.randint(0, 10 ** rng.randint(1, 4) - 1)
        words.insert(rng.randrange(len(words) + 1), str(number))
    text = " ".join(words)[:MAX_LENGTH].strip()
    case = rng.randrange(3)  # as CLDR writes it, lower case, upper case
    return text.lower() if case == 1 else text.upper() if case == 2 else text


def _character(rng: random.Random) -> str:
    draw = rng.random()
    if draw < ASCII_SHARE:
        return rng.choice(ASCII)
    if draw < ASCII_SHARE + CONTROL_SHARE:
        return rng.choice(CONTROL)
    return rng.choice(rng.choice(OTHER_SCRIPTS))
