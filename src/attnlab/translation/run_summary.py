"""What a run report says about the run itself: its title (name, model and data in words), the
metric of its own task, its training curves grouped into a few charts, and file names shown
without the machine's paths."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from attnlab.models.config import DecoderConfig, EncoderConfig
from attnlab.viz.report import Chart

from .config import RunConfig

if TYPE_CHECKING:
    from .protocol import TranslatingRun

# The data set's name (its meta.json's task, else data.dir's last folder) -> how the title
# names it; any other name is shown as is
DATASETS = {"multi30k": "Multi30k", "multi30k-long": "Multi30k-long (joined pairs)",
            "dates": "dates task"}
# Folder names that say nothing about the data in them: the title names the folder above too
GENERIC_FOLDERS = {"", ".", "data", "dataset", "datasets", "corpus", "corpora", "text"}
DATA_META = "meta.json"  # a data folder's description (the dates task writes one: data/dates.py)
# An absolute path of two or more parts in free text ("</s>" is no path: see the lookbehind).
ABSOLUTE_PATH = re.compile(r"(?<![\w.~<>])(?:/[^\s/()\[\]'\",;:<>|]+){2,}/?")
Points = list[tuple[float, float]]


class PathNames:
    """Files as a report shows them: a path inside the run directory relative to it, any
    other by its file name, so the page shows no path of the machine it was made on."""

    def __init__(self, run_directory: str | os.PathLike):
        self.run_directory = Path(run_directory).resolve()

    def show(self, path: str | os.PathLike) -> str:
        resolved = Path(path).resolve()
        if resolved.is_relative_to(self.run_directory) and resolved != self.run_directory:
            return str(resolved.relative_to(self.run_directory))
        return resolved.name or str(path)

    def hide(self, text: str) -> str:
        """`text` with every absolute path in it shown as `show` would."""
        return ABSOLUTE_PATH.sub(lambda match: self.show(match.group()), text)

    def pair(self, source: str | os.PathLike | None, reference: str | os.PathLike | None) -> str:
        """"val.de.gz / val.en.gz", or the source and "its references" without a reference."""
        if source is None:
            return "the given sentences"
        return f"{self.show(source)} / " + (
            "its references" if reference is None else self.show(reference))


def shown_config(config: Mapping, names: PathNames) -> dict:
    """The config dict with each absolute path value (e.g. data.dir) shown by its name."""
    return {key: shown_config(value, names) if isinstance(value, Mapping)
            else f"…/{names.show(value)}" if isinstance(value, str) and os.path.isabs(value)
            else value for key, value in config.items()}


def run_title(run: TranslatingRun) -> str:
    """'Bahdanau attention (additive, global), bi-GRU 2x128 -> GRU 256, Multi30k de-en': what
    the run is, never its folder's name (`runs/demo/run` is no description)."""
    return f"{model_words(run.config)}, {data_words(run.config)}"


def model_words(config: RunConfig) -> str:
    """The attention, the encoder and the decoder in words."""
    encoder, decoder = config.model.encoder, config.model.decoder
    if encoder.kind == "lstmn":
        source = f"LSTMN {encoder.hidden_dim} ({encoder.score} intra-attention)"
    elif encoder.kind == "transformer":
        source = transformer_words(encoder)
    else:
        both = encoder.bidirectional
        source = f"{'bi-' if both else ''}{encoder.rnn.upper()} {'2x' if both else ''}" \
                 f"{encoder.hidden_dim}"
        source += f", {encoder.layers} layers" if encoder.layers > 1 else ""
    target = f"{decoder.rnn.upper()} {decoder.hidden_dim}"
    target += f", {decoder.layers} layers" if decoder.layers > 1 else ""
    if decoder.kind == "transformer":
        target = transformer_words(decoder)
    return f"{attention_words(config)}, {source} -> {target}"


def transformer_words(side: EncoderConfig | DecoderConfig) -> str:
    """'Transformer 256, 3 layers x 8 heads'."""
    return f"Transformer {side.hidden_dim}, {side.layers} layers x {side.heads} heads"


def attention_words(config: RunConfig) -> str:
    """'Bahdanau attention (additive, global)', 'Luong attention (general, local-p (D=10))'."""
    decoder = config.model.decoder
    if decoder.kind == "none":
        return "no attention"
    return f"{decoder.kind.capitalize()} attention ({decoder.attention.describe()})"


def data_meta(config: RunConfig) -> dict:
    """The data folder's meta.json, or {} when it has none (or it cannot be read)."""
    try:
        meta = json.loads((Path(config.data.dir) / DATA_META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def data_task(config: RunConfig) -> str | None:
    """The task the data folder's meta.json names ("dates" for "dates: human-readable date ->
    ISO 8601 YYYY-MM-DD"), or None."""
    task = data_meta(config).get("task")
    if not isinstance(task, str):
        return None
    return task.split(":", 1)[0].strip() or None


def own_metric_is_exact_match(config: RunConfig) -> bool:
    """Whether exact match (the output equals its reference) is the run's own metric: its data
    says it is the dates task, or the run picks its best checkpoint by exact match."""
    return data_task(config) == "dates" or config.train.early_stopping.metric == "exact_match"


def dataset_name(config: RunConfig) -> str:
    """The data set in words: its meta.json's task, else its folder's name, with the folder
    above when that name is as bare as "data" ("demo/data")."""
    name = data_task(config)
    if name is None:
        folder = Path(os.path.abspath(config.data.dir))
        name = folder.name
        if name.lower() in GENERIC_FOLDERS and folder.parent.name:
            name = f"{folder.parent.name}/{name}"
    return DATASETS.get(name, name)


def data_words(config: RunConfig) -> str:
    """'Multi30k de-en', 'dates task, characters', ..."""
    data = config.data
    text = dataset_name(config)
    if (data.src_lang, data.tgt_lang) != ("src", "tgt"):
        text += f" {data.src_lang}-{data.tgt_lang}"
    return text + (", characters" if data.vocab == "char" else "")


def curve_charts(curves: Mapping[str, Points], best_by: str | None = None) -> list[Chart]:
    """read_curves' curves as a few charts: training and validation loss together; validation
    BLEU and chrF (and exact match when it picks the best checkpoint, `best_by`, or rises
    above 1%); the learning rate only when it changed; any other curve alone. Validation
    perplexity is exp(loss), so it is not drawn."""
    curves = dict(curves)
    charts = []
    loss = _take(curves, {"training": "train loss", "validation": "valid loss"})
    perplexity = curves.pop("valid perplexity", [])
    if loss:
        caption = f"last validation perplexity {perplexity[-1][1]:.2f}" if perplexity else ""
        charts.append(Chart("Loss per target token", loss, "loss", caption=caption))
    names = {"BLEU": "valid bleu", "chrF": "valid chrf"}
    exact = curves.pop("valid exact_match", [])
    if best_by == "exact_match" or any(value >= 1.0 for _, value in exact):
        curves["valid exact_match"] = exact
        names["exact match %"] = "valid exact_match"
    scores = _take(curves, names)
    if scores:
        label = next((label for label, name in names.items() if name == f"valid {best_by}"),
                     None)
        caption = f"the best checkpoint is chosen by validation {label}" if label else ""
        charts.append(Chart(f"Validation {', '.join(scores)}", scores, "score (0-100)",
                            caption=caption))
    rate = curves.pop("train lr", [])
    if len({value for _, value in rate}) > 1:
        charts.append(Chart("Learning rate", {"learning rate": rate}, "learning rate"))
    charts.extend(Chart(name, {name: points}, name) for name, points in curves.items())
    return charts


def _take(curves: dict[str, Points], names: Mapping[str, str]) -> dict[str, Points]:
    """The curves named, under their new names, removed from `curves`; absent ones left out."""
    return {label: curves.pop(name) for label, name in names.items() if curves.get(name)}
