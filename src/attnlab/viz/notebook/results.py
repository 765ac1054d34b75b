"""Views of results, from their plain data: tokens, weights, images. The recipes' result
classes (translations, captions, readings) call these; viz reads only their attributes, so it
knows no model.

A translation offers the levels its vocabulary has, the model's own pieces first (what it
reads: characters for a character model) and words after, as the page's levels.js names them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnlab.viz.heatmap import shorten

from .shrink import shrink
from .tables import links_table, matrix_table
from .views import CaptionFigureView, View, png_url, rounded

# A sentence in a title is cut here with "…" (a view's table and .weights have it whole).
TITLE_CHARS = 80

# The model's pieces by vocabulary kind (levels.js says the same for the page); a word
# vocabulary's pieces are its words, so it offers one level.
PIECES = {"char": "characters", "bpe": "subword pieces", "unigram": "subword pieces"}


def levels_of(vocabulary: str) -> list[tuple[str, str]]:
    """[(API level, its name)], the default first."""
    pieces = PIECES.get(vocabulary)
    return [("piece", pieces), ("word", "words")] if pieces else [("word", "words")]


def _tokens(hypothesis: Any, level: str, vocabulary: str) -> tuple[list, list, Any]:
    """(target tokens, source tokens, attention) of a labelled translation at `level`."""
    if level == "word" and vocabulary in PIECES:
        return (hypothesis.target_words, hypothesis.source_words, hypothesis.word_attention)
    return hypothesis.target_pieces, hypothesis.source_pieces, hypothesis.attention


def _level_heads(heads: Mapping[str, Any] | None, level: str, vocabulary: str) -> Any:
    """A hypothesis' heads {"piece": (L, H, T, S), "word": ...} at `level` (as _tokens)."""
    if heads is None:
        return None
    return heads["word" if level == "word" and vocabulary in PIECES else "piece"]


def hypothesis_data(hypothesis: Any, level: str, vocabulary: str,
                    heads: Mapping[str, Any] | None = None) -> dict:
    """One hypothesis as the explorer's API gives it: text, score, tokens, source_tokens,
    attention (target tokens, source tokens) or None, and with `heads` ({level: (L, H, T, S)},
    a Transformer's every layer and head) heads, each drawn as attention is; past MAX_SIDE
    tokens a side, drawn smaller (shrink.py) and a note saying so."""
    tokens, source, attention = _tokens(hypothesis, level, vocabulary)
    drawn = shrink(tokens, source, attention)
    name = dict(levels_of(vocabulary)).get(level, "tokens")
    data = {
        "text": hypothesis.text,
        "score": float(hypothesis.score),
        "tokens": drawn.rows,
        "source_tokens": drawn.cols,
        "attention": rounded(drawn.weights),
    }
    if (every := _level_heads(heads, level, vocabulary)) is not None:
        data["heads"] = [[rounded(shrink(tokens, source, matrix).weights) for matrix in layer]
                         for layer in every]
    note = drawn.note(f"the {len(tokens):,} {name} it wrote", f"the {len(source):,} {name} it read")
    if note:
        data["note"] = f"{note[0].upper()}{note[1:]}; .weights has every weight."
    return data


def _notes(hypotheses: Sequence[dict]) -> str | None:
    """The first note of a list of hypothesis_data (the source is merged alike in all)."""
    return next((h["note"] for h in hypotheses if h.get("note")), None)


def quoted(text: str) -> str:
    """“text” for a title, cut at TITLE_CHARS."""
    return f"“{shorten(text, TITLE_CHARS)}”"


def source_text(hypothesis: Any) -> str:
    """The source sentence, from its words (the "</s>" the model read left out)."""
    words = [w for w in hypothesis.source_words if w != "</s>"]
    return " ".join(words)


def translation_view(
    hypotheses: Sequence[Any], vocabulary: str, title: str | None = None,
    name: str = "translation", *, heads: Sequence[Mapping[str, Any]] | None = None,
    choice: tuple[int, int | None] | None = None,
) -> View:
    """The n-best list of one sentence (best first; each a labelled translation: text, score,
    pieces, words and their attention), at each level of `vocabulary`. heads: each
    hypothesis' every layer and head, {"piece": (L, H, T, S), "word": (L, H, T', S')}: the
    view then offers a layer and head, `choice` (layer from 0, head from 0 or None for the
    layer's mean) first, and the grid of them all."""
    best = hypotheses[0]
    title = title or f"{quoted(source_text(best))} → {quoted(best.text)}"
    levels: list[dict[str, Any]] = []
    for level, level_name in levels_of(vocabulary):
        data = [hypothesis_data(h, level, vocabulary, None if heads is None else heads[k])
                for k, h in enumerate(hypotheses)]
        entry: dict[str, Any] = {"value": level, "name": level_name, "hypotheses": data}
        if note := _notes(data):
            entry["note"] = note
        levels.append(entry)
    first_tokens, first_source, shown = _tokens(best, levels[0]["value"], vocabulary)
    lines = [
        f"{title} ({levels[0]['name']}; score {best.score:.3f})",
        matrix_table(list(first_tokens), list(first_source), shown),
    ]
    lines += [f"{k}. {h.text} ({h.score:.3f})" for k, h in enumerate(hypotheses[1:], start=2)]
    payload: dict[str, Any] = {"kind": "translation", "name": name, "title": title,
                               "levels": levels}
    if heads is not None and choice is not None:
        payload["choice"] = {"layer": choice[0], "head": choice[1]}
    return View(payload, "\n".join(lines), shown)


@dataclass
class _Forced:
    """An explained output as hypothesis_data reads a translation (its own pieces only)."""

    text: str
    score: float
    target_pieces: list[str]
    source_pieces: list[str]
    attention: Any


SIGNIFICANT = 5  # an attribution's digits in the HTML: its values can be any size


def significant(values: Any) -> list:
    """A matrix as nested lists of numbers to SIGNIFICANT digits (None where not finite)."""
    matrix = np.asarray(values, dtype=np.float64)
    return [[float(f"{v:.{SIGNIFICANT}g}") if np.isfinite(v) else None for v in row]
            for row in matrix.tolist()]


def explanation_view(
    source_pieces: Sequence[str],
    target_pieces: Sequence[str],
    text: str,
    views: Mapping[str, Any],
    *,
    source: str | None = None,
    log_probs: Sequence[float] = (),
    title: str | None = None,
    name: str = "explanation",
) -> View:
    """One output's attention beside its attributions (attnlab.explain's Explanation): the
    translation view with a switch between them, over the model's pieces. views: "attention"
    (a model's own, rows summing to 1; absent for a model without it) and each attribution
    (signed, the view draws each row's magnitudes over its largest), (T, S) each; the payload
    holds each attribution to SIGNIFICANT digits."""
    source_pieces, target_pieces = list(source_pieces), list(target_pieces)
    source = source if source is not None else "".join(
        piece for piece in source_pieces if piece != "</s>")
    title = title or f"{quoted(source)} → {quoted(text)}"
    attention = views.get("attention")
    score = float(np.nansum(log_probs)) if len(log_probs) else 0.0
    forced = _Forced(text, score, target_pieces, source_pieces, attention)
    hypothesis = hypothesis_data(forced, "piece", "")  # its notes name "tokens"
    attributions = [view for view in views if view != "attention"]
    shown: dict[str, Any] = {}
    for view in attributions:
        # whole, or drawn smaller as the attention is (neighbours merged: magnitudes summed)
        values = np.asarray(views[view], dtype=np.float64)
        drawn = shrink(target_pieces, source_pieces, np.abs(np.nan_to_num(values)))
        whole = drawn.row_block == drawn.col_block == 1
        shown[view] = significant(values if whole else drawn.weights)
    level: dict[str, Any] = {"value": "piece", "name": "pieces", "hypotheses": [hypothesis]}
    if hypothesis.get("note"):
        level["note"] = hypothesis["note"]
    payload = {
        "kind": "translation",
        "name": name,
        "title": title,
        "levels": [level],
        "explanation": {"source_pieces": hypothesis["source_tokens"],
                        "target_pieces": hypothesis["tokens"], "views": shown},
        "attributions": attributions,
        "view": "attention" if attention is not None else (attributions or ["attention"])[0],
    }
    table = links_table(target_pieces, source_pieces, dict(views))
    return View(payload, f"{title}\n{table}", dict(views))


def caption_view(
    words: Sequence[str],
    attention: Any,
    image: np.ndarray | None,
    title: str | None = None,
    name: str = "caption",
) -> View:
    """A caption: words, attention (words, H, W) over the annotation grid, image (S, S, 3)
    uint8 as the model saw it (None: a grey square)."""
    attention = np.asarray(attention, dtype=np.float64)
    count, height, width = attention.shape
    if image is None:
        image = np.full((8 * height, 8 * width, 3), 200, dtype=np.uint8)
    text = " ".join(words)
    title = title or f"“{text}”"
    answer = {
        "caption": text,
        "tokens": list(words),
        "attention": rounded(attention.reshape(count, height * width)),
        "grid": [height, width],
        "image": png_url(image),
    }
    rows = [
        f"{word}: looks most at cell {np.unravel_index(int(a.argmax()), a.shape)}"
        for word, a in zip(words, attention, strict=True)
    ]
    payload = {
        "kind": "caption",
        "name": name,
        "title": title,
        "answer": answer,
        "size": [int(image.shape[0]), int(image.shape[1])],
    }
    return CaptionFigureView(
        payload,
        "\n".join([title, f"grid {height} x {width}", *rows]),
        attention,
        attention=attention,
    )


def reading_view(
    tokens: Sequence[str], weights: Any, title: str | None = None, name: str = "reading"
) -> View:
    """An LSTMN's reading: tokens (T,), weights (T, T), row t over the tokens before t."""
    weights = np.asarray(weights, dtype=np.float64)
    words = [t for t in tokens if t != "<s>" and t.strip(" \u2581")]
    title = title or f"Reading “{' '.join(words)}”"
    answer = {"tokens": list(tokens), "weights": rounded(weights)}
    return View(
        {"kind": "reading", "name": name, "title": title, "answer": answer},
        f"{title}\n{matrix_table(list(tokens), list(tokens), weights)}",
        weights,
    )


def compare_view(
    translations: Mapping[str, Any], vocabulary: str | None = None, title: str | None = None
) -> View:
    """Several runs' translations of one sentence side by side: {run label: a translation
    (its best hypothesis drawn, at the model's own pieces unless vocabulary says words)}."""
    entries, texts, weights = [], [], {}
    for label, result in translations.items():
        kind = str(vocabulary or getattr(result, "vocabulary", "bpe"))
        data = hypothesis_data(result, levels_of(kind)[0][0], kind)
        entries.append({"run": {"name": label, "mechanism": ""}, "hypothesis": data})
        tokens, source, attention = _tokens(result, levels_of(kind)[0][0], kind)
        texts.append(f"{label}: {result.text}\n"
                     f"{matrix_table(list(tokens), list(source), attention)}")
        weights[label] = attention
    first = next(iter(translations.values()))
    title = title or f"{quoted(source_text(first))}, {len(entries)} runs side by side"
    return View(
        {"kind": "compare", "title": title, "entries": entries},
        "\n\n".join([title, *texts]),
        weights,
    )


def _score(value: Any, spread: Any) -> str:
    if not isinstance(value, int | float):
        return "" if value is None else str(value)
    text = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{text} ± {spread:.2g}" if isinstance(spread, int | float) and spread else text


def suite_view(records: Sequence[Mapping[str, Any]], title: str | None = None) -> View:
    """A suite's results (the records `attnlab compare` keeps per member): their scores in a
    table and each member's example translation side by side."""
    keys = [
        key
        for key in dict.fromkeys(k for r in records for k in r.get("scores", {}))
        if any(isinstance(r["scores"].get(key), int | float) for r in records)
    ]
    columns = ["member", "updates", *keys]
    rows = [
        [
            str(r.get("label") or r["name"]),
            _score(r.get("updates"), None),
            *(_score(r["scores"].get(k), (r.get("spread") or {}).get(k)) for k in keys),
        ]
        for r in records
    ]
    entries = []
    for record in records:
        example = record.get("example") or {}
        weights = example.get("weights")
        hypothesis = (
            None
            if not example or "target_tokens" not in example
            else {
                "text": example.get("translation", ""),
                "score": 0.0,
                "tokens": example["target_tokens"],
                "source_tokens": example["source_tokens"],
                "attention": rounded(weights),
            }
        )
        entries.append(
            {
                "run": {
                    "name": str(record.get("label") or record["name"]),
                    "mechanism": example.get("translation", ""),
                },
                "hypothesis": hypothesis,
                "failure": None if hypothesis else "No attention to draw.",
            }
        )
    title = title or f"{len(records)} members"
    widths = [max(len(str(x)) for x in column) for column in zip(columns, *rows, strict=True)]
    table = "\n".join(
        "  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True))
        for row in [columns, *rows]
    )
    return View(
        {
            "kind": "compare",
            "title": title,
            "table": {"columns": columns, "rows": rows},
            "entries": entries,
        },
        f"{title}\n{table}",
        {r["name"]: (r.get("example") or {}).get("weights") for r in records},
    )
