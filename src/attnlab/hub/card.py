"""MODEL.md, the model card of an exported model: what it does, what it is, how well it did at
the exported step, what it was trained on, the command that trains it again, how to use it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from attnlab.config import config_from_dict
from attnlab.recipes import Recipe
from attnlab.version import __version__


@dataclass
class CardFacts:
    """What the card says: kind (the task), name (the model folder's), config (config.json as
    plain data), meta (the exported meta.json), parameters (count), checkpoint (the run's
    checkpoint it came from), files [(path in the folder, bytes)], validated (the step of the
    validation its metrics come from, when the run's metrics.jsonl says), relative (the config's
    keys whose absolute paths the export wrote relative to the run directory)."""

    kind: Recipe
    name: str
    config: dict
    meta: dict
    parameters: int
    checkpoint: str
    files: list[tuple[str, int]]
    validated: int | None = None
    relative: list[str] = field(default_factory=list)


def model_card(facts: CardFacts) -> str:
    """The Markdown text of MODEL.md."""
    sections = [_summary(facts), _metrics(facts), _data(facts), _reproduce(facts), _use(facts),
                _files(facts)]
    return "\n\n".join(section for section in sections if section) + "\n"


def _title(facts: CardFacts) -> str:
    return facts.kind.purpose + facts.kind.data_title(facts.config.get("data", {}))


def _model(facts: CardFacts):
    """The run's model config, as the recipe's dataclass."""
    # every recipe's config has a model section (ExperimentConfig itself has none)
    config: Any = config_from_dict(facts.config, facts.kind.config_class)
    return config.model


def _summary(facts: CardFacts) -> str:
    meta = facts.meta
    title = _title(facts)
    rows = [("task", title),
            *facts.kind.architecture(_model(facts)),
            ("parameters", f"{facts.parameters:,}"),
            ("weights", f"the {facts.checkpoint} checkpoint of its run, step "
                        f"{meta.get('step', '?')} (epoch {meta.get('epoch', '?')})"),
            ("trained with", f"attnlab {meta.get('attnlab_version', '?')}"),
            ("exported with", f"attnlab {__version__}")]
    lines = [f"# {facts.name}", "",
             f"An attnlab model for {title}, in a self-contained folder written by "
             f"`attnlab export`: every attnlab command that takes `--run DIR` takes this folder, "
             f"and `attnlab.load` loads it.", "", *_table(("", ""), rows)]
    encoder = facts.config["model"].get("encoder", {})
    if encoder.get("kind") == "resnet":
        lines += ["", f"Loading builds the ResNet from `model.encoder.weights` "
                      f"(`{encoder.get('weights')}`) before this model's weights replace its "
                      f"own: that file must exist where the config says."]
    return "\n".join(lines)


def _metrics(facts: CardFacts) -> str:
    metrics = facts.meta.get("metrics") or {}
    step = facts.meta.get("step", "?")
    if not metrics:
        return f"## Metrics\n\nNo validation was recorded at step {step}."
    rows = [(name, _number(value)) for name, value in metrics.items()]
    at = step if facts.validated is None else facts.validated
    later = "" if at == step else f" (the weights are those of step {step})"
    return "\n".join([f"## Metrics\n\nOn the validation data, at step {at}{later}:", "",
                      *_table(("metric", "value"), rows)])


def _data(facts: CardFacts) -> str:
    data = facts.config.get("data", {})
    rows = [(f"data.{key}", f"`{json.dumps(value, ensure_ascii=False)}`")
            for key, value in data.items()]
    if facts.relative:
        keys = ", ".join(f"`{key}`" for key in facts.relative)
        paths = (f"As the run's config gives it, but for the paths of the machine that trained "
                 f"it ({keys}): they are written relative to this folder as it was exported "
                 f"(`..` is the folder above it), so commands run in this folder on that machine "
                 f"find the data; elsewhere, give the commands the data files.")
    else:
        paths = "As the run's config gives it (a relative path is from where it was trained):"
    return "\n".join(["## Data", "", paths, "", *_table(("setting", "value"), rows)])


def _reproduce(facts: CardFacts) -> str:
    run = f"runs/{facts.name}"
    text = (f"## Reproduce\n\n`config.json` is the run's whole experiment config (data, model, "
            f"seed, schedule, every default). In this folder, with the data where `data` says:"
            f"\n\n```bash\n"
            f"{facts.kind.commands['train']} config.json --run {run}\n```\n\nThis model is that "
            f"run's "
            f"`{facts.checkpoint}/` checkpoint (step {facts.meta.get('step', '?')}).")
    if facts.config.get("train", {}).get("max_minutes") is not None:
        text += (f" The run stops on `train.max_minutes`, so how far it gets depends on the "
                 f"machine: add `--set train.max_steps={facts.meta.get('step', 'N')}` to stop "
                 f"at this step.")
    return text


def _use(facts: CardFacts) -> str:
    commands = "\n".join(use.replace("MODEL", facts.name) for use in facts.kind.uses)
    python = facts.kind.python.replace("MODEL", facts.name)
    return (f"## Use\n\n```bash\n{commands}\n```\n\n```python\nimport attnlab\n\n{python}\n```")


def _files(facts: CardFacts) -> str:
    rows = [(f"`{name}`", f"{size:,} bytes") for name, size in facts.files]
    return "\n".join(["## Files", "", *_table(("file", "size"), rows), "",
                      "`best/meta.json` records the sha256 of `best/model.safetensors`: a "
                      "changed or damaged weights file is refused when it loads."])


def _table(header: tuple[str, str], rows) -> list[str]:
    return [f"| {header[0]} | {header[1]} |", "|---|---|",
            *(f"| {key} | {value} |" for key, value in rows)]


def _number(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
