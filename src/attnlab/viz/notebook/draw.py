"""The views' figures drawn without a browser: the page's own figure code (static/*.js, as
bundled for the notebook) run in V8 (the mini-racer package) over a small DOM (shim.js), so
`to_svg()` is the SVG the page's download button saves; `png()` renders it with resvg.

Text is measured with DejaVu Sans (matplotlib's font), glyph by glyph: the page measures
with the reader's system font, so a label's box can differ from the page's by a pixel or two.
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Any

from . import assets

SHIM = Path(__file__).with_name("shim.js")
INSTALL = "pip install 'attnlab[notebook]'"
# A PNG's pixels (4 bytes each while drawn): a view's figure at the page's scale 2 is well
# under it (its cells are bounded, shrink.py); a larger scale is refused, not drawn.
MAX_PNG_PIXELS = 60_000_000


class MissingDrawing(ImportError):
    """The packages that draw a view without a browser are not installed."""


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


@functools.cache
def _fonts():
    from matplotlib import get_data_path
    from PIL import ImageFont

    folder = Path(get_data_path()) / "fonts" / "ttf"
    return (
        ImageFont.truetype(str(folder / "DejaVuSans.ttf"), 100),
        ImageFont.truetype(str(folder / "DejaVuSans-Bold.ttf"), 100),
    )


def glyph_widths(payload: dict) -> dict:
    """Each character of the payload's strings (and the digits and ASCII letters), its width
    in ems, plain and bold."""
    chars = set("".join(_strings(payload))) | {chr(c) for c in range(32, 127)} | set("␣·∅…←→“”")
    chars.discard("")
    normal, bold = _fonts()
    return {
        "normal": _widths(normal, chars),
        "bold": _widths(bold, chars),
        "fallback": 0.6,
    }


def _widths(font, chars: set[str]) -> dict[str, float]:
    """Each character's width in ems; one the font's layout refuses (a line separator, say)
    is left to the fallback width."""
    widths = {}
    for c in chars:
        try:
            widths[c] = font.getlength(c) / 100
        except (RuntimeError, ValueError, OSError):
            continue
    return widths


def _racer():
    try:
        from py_mini_racer import MiniRacer
    except ImportError:
        raise MissingDrawing(f"drawing a view's SVG or PNG needs mini-racer: {INSTALL}") from None
    return MiniRacer()


def to_svg(payload: dict) -> str:
    """The SVG the view's download button saves (its figure without hover), as text."""
    racer = _racer()
    racer.eval(f"globalThis.GLYPH_WIDTHS = {json.dumps(glyph_widths(payload))};")
    racer.eval(SHIM.read_text(encoding="utf-8"))
    racer.eval(assets.bundle())
    call = (
        f"(() => {{ const svg = window[{json.dumps(assets.GLOBAL)}].figure("
        f"{json.dumps(payload)}); return svg ? new XMLSerializer().serializeToString(svg) "
        f": null; }})()"
    )
    svg = racer.eval(call)
    if svg is None:
        raise ValueError("this view has no attention to draw")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{svg}'


def svg_size(svg: str) -> tuple[float, float]:
    """(width, height) of an SVG's root element, in SVG pixels."""
    root = re.search(r"<svg\b[^>]*>", svg)
    found = {key: re.search(rf'\s{key}="([\d.]+)"', root[0]) if root else None
             for key in ("width", "height")}
    if not (found["width"] and found["height"]):
        raise ValueError("the SVG's root element gives no width and height")
    return float(found["width"][1]), float(found["height"][1])


def png(svg: str, scale: float = 2.0) -> bytes:
    """The SVG as PNG, `scale` pixels per SVG pixel (the page's PNG download uses 2); at most
    MAX_PNG_PIXELS (ValueError naming the scale past that)."""
    width, height = svg_size(svg)
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale {scale} is not a positive number of pixels per SVG pixel")
    if width * height * scale * scale > MAX_PNG_PIXELS:
        raise ValueError(
            f"at scale {scale:g} the PNG would be {width * scale:,.0f} x {height * scale:,.0f} "
            f"pixels, more than {MAX_PNG_PIXELS:,}; give a smaller scale"
        )
    try:
        import resvg_py
    except ImportError:
        raise MissingDrawing(f"drawing a view's PNG needs resvg-py: {INSTALL}") from None
    from matplotlib import get_data_path

    # the font the text was measured in, whatever fonts the system has
    fonts = [str(p) for p in (Path(get_data_path()) / "fonts" / "ttf").glob("DejaVuSans*.ttf")]
    return bytes(
        resvg_py.svg_to_bytes(
            svg_string=svg,
            zoom=scale,
            background="#ffffff",
            font_files=fonts,
            font_family="DejaVu Sans",
            sans_serif_family="DejaVu Sans",
        )
    )
