"""One self-contained HTML report of a run: config, curves, tables, images and notes.

Everything is inline (CSS, images as base64 data URIs, curves drawn here as PNGs), so the file can
be mailed, archived or opened offline and shows the same thing in ten years: no CDN, no scripts.
"""

from __future__ import annotations

import base64
import html
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; color: #222; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.6rem; text-align: left; }
th { background: #f2f2f2; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0; } figcaption { font-size: 0.9rem; color: #555; }
img { max-width: 100%; } pre { white-space: pre-wrap; background: #f7f7f7; padding: 0.6rem; }
"""

# The image types we embed, by their first bytes: a data URI needs the right MIME type.
MAGIC = {b"\x89PNG": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF8": "image/gif"}


def _mime(data: bytes) -> str:
    for magic, mime in MAGIC.items():
        if data.startswith(magic):
            return mime
    if data.lstrip()[:5] in (b"<?xml", b"<svg ") or b"<svg" in data[:512]:
        return "image/svg+xml"
    raise ValueError("image bytes are not PNG, JPEG, GIF or SVG.")


def data_uri(image: bytes | str | os.PathLike) -> str:
    """A base64 data URI of image bytes, or of the image file at a path."""
    data = image if isinstance(image, bytes) else Path(image).read_bytes()
    return f"data:{_mime(data)};base64,{base64.b64encode(data).decode('ascii')}"


def curve_png(name: str, points: Sequence[tuple[float, float]]) -> bytes:
    """A small PNG line plot of (step, value) points."""
    figure = Figure(figsize=(6, 3), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    steps = [step for step, _ in points]
    values = [value for _, value in points]
    axes.plot(steps, values, marker="." if len(points) < 50 else None)
    axes.set_xlabel("step")
    axes.set_ylabel(name)
    axes.grid(alpha=0.3)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def _flatten(config: Mapping, prefix: str = "") -> list[tuple[str, object]]:
    """Nested dicts as dotted keys, matching the CLI's --set a.b=c paths."""
    items = []
    for key, value in config.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            items.extend(_flatten(value, dotted + "."))
        else:
            items.append((dotted, value))
    return items


def _cell(value: object, tag: str) -> str:
    text = str(value)
    numeric = text.replace(".", "", 1).replace("-", "", 1).isdigit()
    css = ' class="num"' if numeric and tag == "td" else ""
    return f"<{tag}{css}>{html.escape(text)}</{tag}>"


def html_table(rows: Sequence[Sequence[object]]) -> str:
    """An HTML table; rows[0] is the header row. All text is escaped."""
    if not rows:
        return "<p>(empty)</p>"
    head = "".join(_cell(value, "th") for value in rows[0])
    body = "".join(
        "<tr>" + "".join(_cell(value, "td") for value in row) + "</tr>" for row in rows[1:]
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figure(uri: str, caption: str) -> str:
    caption = html.escape(caption)
    return f'<figure><img src="{uri}" alt="{caption}"><figcaption>{caption}</figcaption></figure>'


def report_html(
    *,
    title: str,
    config: Mapping,
    curves: Mapping[str, Sequence[tuple[float, float]]],
    tables: Mapping[str, Sequence[Sequence[object]]],
    images: Mapping[str, bytes | str | os.PathLike],
    notes: str = "",
) -> str:
    """One self-contained HTML report as text.

    config: settings, nested dicts allowed. curves: name -> [(step, value), ...], drawn as PNGs.
    tables: name -> rows, first row the header. images: caption -> PNG/JPEG/SVG bytes or file path.
    notes: free text, shown as preformatted paragraphs.
    """
    parts = [f"<h1>{html.escape(title)}</h1>"]
    if notes:
        parts.append(f"<h2>Notes</h2><pre>{html.escape(notes)}</pre>")
    parts.append("<h2>Configuration</h2>")
    parts.append(html_table([("setting", "value"), *_flatten(config)]))
    if curves:
        parts.append("<h2>Curves</h2>")
        parts.extend(_figure(data_uri(curve_png(name, pts)), name) for name, pts in curves.items())
    for name, rows in tables.items():
        parts.append(f"<h2>{html.escape(name)}</h2>{html_table(rows)}")
    if images:
        parts.append("<h2>Figures</h2>")
        parts.extend(_figure(data_uri(image), caption) for caption, image in images.items())
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(parts)}</body></html>\n"
    )


def write_report(path: str | os.PathLike, **parts) -> Path:
    """Write the report_html(**parts) page to path; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report_html(**parts), encoding="utf-8")
    return path
