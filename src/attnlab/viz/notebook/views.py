"""A result as the explorer draws it, for a notebook: a View holds the payload notebook.js
draws (plain JSON: tokens, weights, an image as a data URL) and gives it every way out: inline
HTML (`_repr_html_`, `_repr_mimebundle_`), a page (`save_html`), the page's figure
(`to_svg`, `save_png`) and a plain table (`repr`, `text/plain`) for a console.

The HTML is self-contained: the page's modules and CSS inlined (assets.py), the view drawn in
its own shadow root (styles and ids its own), and under it a static PNG of the same figure
(or the plain table) for where scripts do not run, e.g. a notebook preview on a code host.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from . import assets, draw

DECIMALS = 5  # weights in the HTML: enough to keep every argmax, small enough to read


def rounded(weights: Any) -> list | None:
    """An array (or nested lists) of weights as nested lists rounded to DECIMALS."""
    if weights is None:
        return None
    return np.round(np.asarray(weights, dtype=np.float64), DECIMALS).tolist()


def png_url(pixels: np.ndarray) -> str:
    """An (H, W, 3) uint8 image as a PNG data URL."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.asarray(pixels, dtype=np.uint8)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


# Characters HTML or JavaScript could read in a script element's JSON, as JSON escapes: the
# text then holds no "<!--", "</script" or "<script" (which change how the HTML parser reads
# a script element), and the JSON parses back exactly ("<\!--" would not be JSON).
SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                                "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element, and parses back to `value`."""
    text = json.dumps(value, ensure_ascii=False)
    return text.translate(SCRIPT_ESCAPES)


def _write(path: Path, data: bytes) -> Path:
    """data to path whole or not at all: a temporary file beside it, renamed over it; a
    missing folder is one sentence naming it (not the temporary file), before anything is
    written."""
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot write {path}: its folder {path.parent} does not "
                                f"exist; create it first")
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path


@dataclass
class View:
    """One view: payload (what notebook.js draws: kind, title, ...), text (the plain table),
    weights (the arrays it shows, as numpy)."""

    payload: dict
    text: str
    weights: Any = None
    parts: list[View] = field(default_factory=list)

    def __repr__(self) -> str:
        return self.text

    def figure_payload(self) -> dict:
        """The payload to_svg draws (a caption's veils drawn in Python: no canvas in V8)."""
        if self.parts:
            return {**self.payload, "views": [part.figure_payload() for part in self.parts]}
        return self.payload

    def to_svg(self) -> str:
        """The figure the view's SVG download saves, as SVG text."""
        return draw.to_svg(self.figure_payload())

    def save_png(self, path: str | os.PathLike, scale: float = 2.0) -> Path:
        """The same figure as PNG, `scale` pixels per SVG pixel (2, as the page's download)."""
        return _write(Path(path), draw.png(self.to_svg(), scale))

    def static_html(self) -> str:
        """What shows where scripts do not run: the figure as a PNG, else the plain table."""
        try:
            picture = draw.png(self.to_svg(), 1.0)
        except (draw.MissingDrawing, ValueError):
            return f'<pre class="attnlab-text">{html.escape(self.text)}</pre>'
        source = base64.b64encode(picture).decode("ascii")
        alt = html.escape(str(self.payload.get("title", "attention")), quote=True)
        return f'<img alt="{alt}" src="data:image/png;base64,{source}">'

    def _repr_html_(self) -> str:
        return self.html(self.static_html())

    def html(self, static: str) -> str:
        """The interactive view, `static` (HTML) shown where scripts do not run."""
        host = f"attnlab-{uuid.uuid4().hex[:12]}"
        name = json.dumps(assets.GLOBAL)
        return (
            f'<div id="{host}" class="attnlab-view">{static}</div>\n'
            f'<script type="application/json" id="{host}-data">'
            f"{_script_json(self.payload)}</script>\n"
            f"<script>\n(() => {{\nif (!window[{name}]) {{\n{assets.bundle()}}}\n"
            f'const host = document.getElementById("{host}");\n'
            f'const data = JSON.parse(document.getElementById("{host}-data").textContent);\n'
            f"window[{name}].mount(host, data, {json.dumps(assets.css())});\n}})();\n"
            f"</script>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return {"text/html": self._repr_html_(), "text/plain": self.text}

    def save_html(self, path: str | os.PathLike) -> Path:
        """A page of its own holding the view (nothing fetched: open it from the disk)."""
        title = html.escape(str(self.payload.get("title", "attention")))
        page = (
            f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{title}</title>\n</head>\n<body>\n{self._repr_html_()}\n</body>\n"
            f"</html>\n"
        )
        return _write(Path(path), page.encode("utf-8"))


def caption_veils(attention: np.ndarray, side: int = 192) -> list[str]:
    """Each word's attention (H, W) upsampled to side x side as a dark veil over what it did
    not look at (as caption-view.js draws it on a canvas), PNG data URLs."""
    from PIL import Image

    urls = []
    for grid in attention:
        grid = np.asarray(grid, dtype=np.float64)
        alpha = np.round(255 * 0.72 * (1 - grid / (grid.max() or 1))).astype(np.uint8)
        veil = Image.fromarray(alpha, mode="L").resize((side, side), Image.Resampling.BICUBIC)
        rgba = Image.merge("RGBA", (*(Image.new("L", veil.size, 0),) * 3, veil))
        buffer = io.BytesIO()
        rgba.save(buffer, format="PNG")
        urls.append("data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode())
    return urls


@dataclass(repr=False)
class CaptionFigureView(View):
    """A caption's view: the attention (words, H, W) kept to draw its veils for to_svg."""

    attention: Any = None

    def figure_payload(self) -> dict:
        return {**self.payload, "veils": caption_veils(self.attention)}


def group(views: list[View]) -> View:
    """Several views one under another in one output (a list of results)."""
    return View(
        {"kind": "group", "title": "attention", "views": [v.payload for v in views]},
        "\n\n".join(view.text for view in views),
        [view.weights for view in views],
        parts=list(views),
    )


def titled(view: View, label: str) -> View:
    """The view under `label`: its title and its table's first line say it first."""
    title = f"{label}: {view.payload.get('title', '')}"
    return replace(view, payload={**view.payload, "title": title}, text=f"{label}: {view.text}")
