"""One self-contained HTML report: results first, then worked examples, then charts, then the
settings folded away.

Everything is inline (CSS, images as base64 data URIs, charts drawn here as PNGs), so the file can
be mailed, archived or opened offline and shows the same thing in ten years: no CDN, no scripts.
"""

from __future__ import annotations

import base64
import html
import io
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; color: #222; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.6rem; text-align: left; }
th { background: #f2f2f2; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.long { overflow-wrap: anywhere; }
figure { margin: 1rem 0; } figcaption { font-size: 0.9rem; color: #555; }
img { max-width: 100%; } pre { white-space: pre-wrap; background: #f7f7f7; padding: 0.6rem; }
@media (max-width: 40rem) { body { padding: 0 0.6rem; }
  table { display: block; overflow-x: auto; max-width: 100%; }
  th, td { padding: 0.2rem 0.35rem; } }
"""
# The report's own layout on top of STYLE: tables beside their figures, charts two a row.
PAGE_STYLE = STYLE + """
body { max-width: 64rem; padding: 0 1rem; margin-top: 1rem; }
h1 { font-size: 1.45rem; margin-bottom: 0.3rem; } h2 { margin-top: 1.6rem; }
p.lead { color: #444; margin-top: 0; } p.note { font-size: 0.9rem; color: #555; }
.row { display: flex; flex-wrap: wrap; gap: 0 2rem; align-items: flex-start; }
.row > figure { margin-top: 0.5rem; }
.example { border-top: 1px solid #eee; padding-top: 0.6rem; }
.example table { flex: 0 1 28rem; } .example table:only-child { flex: 1 1 auto; }
.example th { width: 6rem; vertical-align: top; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(24rem, 1fr)); gap: 1rem; }
.charts figure { margin: 0; }
details { margin: 1rem 0; } summary { cursor: pointer; font-weight: 600; }
@media (max-width: 40rem) { body { padding: 0 0.5rem; } table { font-size: 0.9rem; } }
"""

# The image types we embed, by their first bytes: a data URI needs the right MIME type.
MAGIC = {b"\x89PNG": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF8": "image/gif"}
NUMBER = re.compile(r"[-+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?")  # right-aligned in a table
MARKERS = 40  # at most this many markers on a line; every point of a short one
# A word longer than this in a table cell may wrap anywhere, so that a sacreBLEU signature (one
# word of 60 characters) leaves the table as narrow as a phone's screen, its last column seen.
LONG_WORD = 24
ImageData = bytes | str | os.PathLike


@dataclass(frozen=True)
class Result:
    """One result: a heading, a line under it, a table (rows[0] the header) and a figure
    beside the table; any of them may be left out."""

    heading: str
    rows: Sequence[Sequence[object]] = ()
    image: ImageData | None = None
    caption: str = ""
    note: str = ""


@dataclass(frozen=True)
class Example:
    """A worked example: labelled lines of text (e.g. source, reference, output) and a figure."""

    lines: Sequence[tuple[str, str]]
    image: ImageData | None = None
    caption: str = ""


@dataclass(frozen=True)
class Chart:
    """A line chart: name -> [(x, y), ...], all on the same axes."""

    title: str
    series: Mapping[str, Sequence[tuple[float, float]]]
    ylabel: str = ""
    xlabel: str = "step"
    caption: str = ""


def _mime(data: bytes) -> str:
    for magic, mime in MAGIC.items():
        if data.startswith(magic):
            return mime
    if data.lstrip()[:5] in (b"<?xml", b"<svg ") or b"<svg" in data[:512]:
        return "image/svg+xml"
    raise ValueError("image bytes are not PNG, JPEG, GIF or SVG.")


def data_uri(image: ImageData) -> str:
    """A base64 data URI of image bytes, or of the image file at a path."""
    data = image if isinstance(image, bytes) else Path(image).read_bytes()
    return f"data:{_mime(data)};base64,{base64.b64encode(data).decode('ascii')}"


def chart_png(chart: Chart) -> bytes:
    """The chart as a PNG: one line with markers per series (a single point is a marker), a
    legend when there are several."""
    figure = Figure(figsize=(4.8, 2.9), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for name, points in chart.series.items():
        xs, ys = [x for x, _ in points], [y for _, y in points]
        axes.plot(xs, ys, marker="o", markersize=3.5, linewidth=1.4, label=name,
                  markevery=max(1, len(points) // MARKERS))
    axes.set_title(chart.title, fontsize=10)
    axes.set_xlabel(chart.xlabel, fontsize=9)
    axes.set_ylabel(chart.ylabel, fontsize=9)
    axes.tick_params(labelsize=8)
    axes.grid(alpha=0.3)
    if len(chart.series) > 1:
        axes.legend(fontsize=8, frameon=False)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def flatten(config: Mapping, prefix: str = "") -> list[tuple[str, object]]:
    """Nested dicts as dotted keys, matching the CLI's --set a.b=c paths."""
    items = []
    for key, value in config.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            items.extend(flatten(value, dotted + "."))
        else:
            items.append((dotted, value))
    return items


def _cell(value: object, tag: str) -> str:
    text = str(value)
    css = ""
    if tag == "td" and NUMBER.fullmatch(text):
        css = ' class="num"'
    elif tag == "td" and len(max(text.split() or [""], key=len)) > LONG_WORD:
        css = ' class="long"'  # e.g. a sacreBLEU signature: it may wrap anywhere
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


def _figure(image: ImageData, caption: str, alt: str = "") -> str:
    caption, alt = html.escape(caption), html.escape(alt or caption)
    text = f"<figcaption>{caption}</figcaption>" if caption else ""
    return f'<figure><img src="{data_uri(image)}" alt="{alt}">{text}</figure>'


def _section(heading: str, body: str) -> str:
    """A section with an id from its heading ("BLEU by length" -> "bleu-by-length")."""
    anchor = "-".join(re.findall(r"[a-z0-9]+", heading.lower()))
    return f'<section id="{anchor}"><h2>{html.escape(heading)}</h2>{body}</section>'


def _note(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>' if text else ""


def _result(result: Result) -> str:
    parts = [html_table(result.rows)] if result.rows else []
    if result.image is not None:
        parts.append(_figure(result.image, result.caption))
    row = f'<div class="row">{"".join(parts)}</div>' if parts else ""
    return _section(result.heading, _note(result.note) + row)


def _example(example: Example) -> str:
    rows = "".join(f"<tr><th>{html.escape(label)}</th><td>{html.escape(text)}</td></tr>"
                   for label, text in example.lines)
    image = "" if example.image is None else _figure(example.image, example.caption)
    return f'<div class="example row"><table>{rows}</table>{image}</div>'


def _charts(charts: Sequence[Chart]) -> str:
    figures = "".join(_figure(chart_png(chart), chart.caption, chart.title) for chart in charts)
    return f'<div class="charts">{figures}</div>'


def _config(config: Mapping) -> str:
    settings = flatten(config)
    return (f'<details id="configuration"><summary>Configuration ({len(settings)} settings)'
            f"</summary>{html_table([('setting', 'value'), *settings])}</details>")


def report_html(*, title: str, lead: str = "", results: Sequence[Result] = (),
                examples: Sequence[Example] = (), examples_note: str = "",
                charts: Sequence[Chart] = (), config: Mapping | None = None) -> str:
    """One self-contained HTML page as text, in this order: the title and a lead paragraph
    (one per line of `lead`); the results; "Samples": the examples; "Training curves": the
    charts, two a row; the config (nested dicts allowed) in a folded <details> table. All text
    is escaped; images are PNG/JPEG/GIF/SVG bytes or file paths, embedded."""
    parts = [f"<h1>{html.escape(title)}</h1>"]
    parts.extend(f'<p class="lead">{html.escape(line)}</p>' for line in lead.splitlines())
    parts.extend(_result(result) for result in results)
    if examples:
        parts.append(_section("Samples", _note(examples_note)
                              + "".join(_example(example) for example in examples)))
    if charts:
        parts.append(_section("Training curves", _charts(charts)))
    if config:
        parts.append(_config(config))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}</style></head>"
        f"<body>{''.join(parts)}</body></html>\n"
    )


def write_report(path: str | os.PathLike, **parts) -> Path:
    """Write the `report_html(**parts)` page to path; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report_html(**parts), encoding="utf-8")
    return path
