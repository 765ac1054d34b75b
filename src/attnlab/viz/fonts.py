"""Fonts for token labels: DejaVu Sans for Latin text, a CJK font as fallback when labels need it.

matplotlib bundles DejaVu Sans, which covers German (ä, ö, ü, ß) and most European scripts, but
has no Chinese, Japanese or Korean glyphs. Since matplotlib 3.6 a *list* of families falls back
glyph by glyph, so ["DejaVu Sans", "Noto Sans CJK SC"] draws "2024年3月5日" correctly. When no
installed font has some characters we warn once, then draw them from the Last Resort font
matplotlib bundles (a box naming each character's script): matplotlib itself would warn once per
character per drawing, hundreds of lines for a few plots of Chinese dates.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Iterable
from pathlib import Path

import matplotlib
from matplotlib import font_manager

BASE_FAMILY = "DejaVu Sans"  # bundled with matplotlib, so always present
# Bundled with matplotlib too (3.10 and later): a glyph for every code point, the box of its
# script, so a character no installed font has is drawn as that box without a warning.
LAST_RESORT_FILE = "LastResortHE-Regular.ttf"

# Families tried in order; the names are the ones fontconfig/matplotlib report for the fonts of
# Debian's fonts-noto-cjk, fonts-wqy-*, fonts-droid-fallback, fonts-arphic-* and Adobe's Source Han.
CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Noto Sans CJK JP",
    "Noto Sans CJK TC",
    "Noto Sans CJK KR",
    "Noto Serif CJK SC",
    "Source Han Sans SC",
    "Source Han Sans CN",
    "Source Han Sans",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
    "AR PL UMing CN",
    "AR PL UKai CN",
    "Noto Sans SC",
)
# Lower-case pieces of the file names of those fonts, for the rescan in find_cjk_family.
CJK_FILE_HINTS = ("cjk", "sourcehan", "wqy", "droidsansfallback", "uming", "ukai", "notosanssc")

INSTALL_HINT = (
    "install the Debian package fonts-noto-cjk (apt-get install fonts-noto-cjk) or pass "
    "font_path= with a font file that has these characters"
)

_warned = False


def _known_family(names: set[str]) -> str | None:
    return next((family for family in CJK_FAMILIES if family in names), None)


@functools.lru_cache(maxsize=1)
def find_cjk_family() -> str | None:
    """Name of an installed CJK font family that matplotlib can use, or None."""
    manager = font_manager.fontManager
    found = _known_family({entry.name for entry in manager.ttflist})
    if found is None:
        # matplotlib caches its font list on first use; a font installed after that is missing
        # from the cache, so look at the font files on disk before giving up.
        for path in font_manager.findSystemFonts():
            if any(hint in os.path.basename(path).lower() for hint in CJK_FILE_HINTS):
                try:
                    manager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue  # an unreadable font file is no reason to fail a plot
        found = _known_family({entry.name for entry in manager.ttflist})
    return found


@functools.lru_cache(maxsize=1)
def last_resort_family() -> str | None:
    """The family name of matplotlib's bundled Last Resort font, or None without it."""
    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / LAST_RESORT_FILE
    if not path.is_file():
        return None
    try:
        return register_font(path)
    except (OSError, RuntimeError, ValueError):
        return None  # a damaged install draws tofu with matplotlib's warnings, as before


def register_font(path: str | os.PathLike) -> str:
    """Make the font file at path usable by matplotlib; returns its family name."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no font file at {path}")
    font_manager.fontManager.addfont(path)
    return font_manager.get_font(path).family_name


@functools.lru_cache(maxsize=32)
def _codepoints(family: str) -> frozenset[int]:
    # a list: a lone string is read as a fontconfig pattern, where "-" in a name is syntax
    properties = font_manager.FontProperties(family=[family])
    path = font_manager.findfont(properties, fallback_to_default=False)
    return frozenset(font_manager.get_font(path).get_charmap())


def missing_glyphs(texts: Iterable[str], families: list[str]) -> set[str]:
    """Characters of texts (whitespace aside) that none of the font families can draw."""
    covered = [_codepoints(family) for family in families]
    characters = {char for text in texts for char in text if not char.isspace()}
    return {char for char in characters if not any(ord(char) in cps for cps in covered)}


def font_families(texts: Iterable[str], font_path: str | os.PathLike | None = None) -> list[str]:
    """The font family list for drawing texts: DejaVu Sans, then fallbacks the texts need.

    font_path: an extra font file to use as the first fallback. Warns once per process when some
    characters have no glyph in any installed font; they are drawn as Last Resort boxes.
    """
    global _warned
    texts = list(texts)
    families = [BASE_FAMILY]
    if font_path is not None:
        families.append(register_font(font_path))
    missing = missing_glyphs(texts, families)
    if missing:
        cjk = find_cjk_family()
        if cjk is not None:
            families.append(cjk)
            missing = missing_glyphs(texts, families)
    if missing and not _warned:
        _warned = True
        sample = "".join(sorted(missing)[:10])
        warnings.warn(
            f"No installed font has glyphs for {sample!r}, so they will show as boxes: "
            f"{INSTALL_HINT}.",
            UserWarning,
            stacklevel=3,
        )
    if missing:
        last_resort = last_resort_family()
        if last_resort is not None:
            families.append(last_resort)
    return families
