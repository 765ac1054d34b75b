"""Every task attnlab trains, as one record each, in one table: what the command line, the
explorer (serve), `attnlab compare` and the hub (export, `attnlab.load`, model cards) know of a
task, and the only place they learn it.

    recipe = RECIPES["translation"]             # or recipe_of_run("runs/x")
    trained = recipe.load("runs/x", "best", device="cpu")
    recipe.describe(trained.config.model)       # "bahdanau / additive, global"

A task's name is its one spelling everywhere: meta.json, suites, the API, messages. Adding a
task is one record here plus its recipe package (config, task, loading, describe, comparison).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlab import captioning, lm, translation
from attnlab.captioning import comparison as captioning_comparison
from attnlab.captioning import describe as captioning_describe
from attnlab.errors import CheckpointError
from attnlab.lm import comparison as lm_comparison
from attnlab.lm import describe as lm_describe
from attnlab.train import run_task
from attnlab.train.config import ExperimentConfig
from attnlab.translation import comparison as translation_comparison
from attnlab.translation import describe as translation_describe

# (column header, score key in a member's "scores", digits)
ScoreColumn = tuple[str, str, int]


@dataclass(frozen=True)
class Comparison:
    """What `attnlab compare` needs of a task. scores(run_dir, evaluate options, example
    sentence, rwth folder, progress) -> the member's figures ({"scores": {...}, ...});
    curve_metric: the validation metric drawn against training minutes (and its label);
    columns: the results table's score columns, the first the main score; data_keys(folder):
    the config keys that point a member at a data folder."""

    scores: Callable[..., dict[str, Any]]
    curve_metric: str
    curve_label: str
    columns: tuple[ScoreColumn, ...]
    data_keys: Callable[[str], dict[str, str]] = lambda folder: {"data.dir": str(folder)}


@dataclass(frozen=True)
class Recipe:
    """One task. name: its one spelling; title: in a sentence ("a language-model run");
    purpose: what its models are for ("language modelling");
    config_class / task_class: its experiment config and training task; load(directory,
    checkpoint=None, device="cpu"): the trained run, with the task's verbs (translate, caption,
    perplexity...); describe(model config): its attention in a few words; architecture(model
    config): the model card's (part, what) rows; commands: verb -> the attnlab command that does
    it for this task ("train", "translate", "evaluate", "plot", "report", "predict"); uses:
    example commands and python: the same from Python (MODEL stands for the folder); endpoint:
    the explorer's API route; comparison: what compare needs."""

    name: str
    title: str
    purpose: str
    config_class: type[ExperimentConfig]
    task_class: type
    load: Callable[..., Any]
    describe: Callable[[Any], str]
    architecture: Callable[[Any], list[tuple[str, str]]]
    commands: Mapping[str, str]
    uses: tuple[str, ...]
    python: str
    endpoint: str
    comparison: Comparison
    quantizable: bool = False  # `--quantize int8` applies (the loaded run has .quantized)

    @property
    def run_files(self) -> tuple[str, ...]:
        """The task's own files in a run directory (its vocabularies)."""
        return tuple(getattr(self.task_class, "run_files", ()))


def _captioning_data(folder: str) -> dict[str, str]:
    return {"data.json": str(Path(folder) / "dataset_shapes.json"),
            "data.images": str(Path(folder) / "images")}


RECIPES: dict[str, Recipe] = {recipe.name: recipe for recipe in (
    Recipe(
        "translation", "translation", "translation",
        translation.RunConfig, translation.TranslationTask,
        translation.load_run, translation_describe.describe, translation_describe.architecture,
        {"train": "attnlab train", "translate": "attnlab translate",
         "predict": "attnlab translate", "evaluate": "attnlab evaluate", "plot": "attnlab plot",
         "report": "attnlab report"},
        ('echo "a sentence" | attnlab translate --run MODEL --beam 5',
         'attnlab plot --run MODEL "a sentence" --output heatmap.png',
         "attnlab evaluate --run MODEL --src SOURCE --ref REFERENCE",
         "attnlab report --run MODEL --src SOURCE --ref REFERENCE"),
        'attnlab.load("MODEL").translate(["a sentence"], beam=5)[0].text',
        "/api/translate",
        Comparison(translation_comparison.comparison_scores, "bleu", "validation BLEU",
                   (("BLEU", "bleu", 2), ("chrF", "chrf", 2))),
        quantizable=True),
    Recipe(
        "captioning", "captioning", "image captioning",
        captioning.RunConfig, captioning.CaptionTask,
        captioning.load_trained, captioning_describe.describe, captioning_describe.architecture,
        {"train": "attnlab caption train", "translate": "attnlab caption predict",
         "predict": "attnlab caption predict", "evaluate": "attnlab caption evaluate",
         "plot": "attnlab caption plot", "report": "attnlab caption evaluate"},
        ("attnlab caption predict --run MODEL IMAGE",
         "attnlab caption plot --run MODEL IMAGE --output where.png",
         "attnlab caption evaluate --run MODEL"),
        'attnlab.load("MODEL").caption(["image.png"])[0].text',
        "/api/caption",
        Comparison(captioning_comparison.comparison_scores, "bleu4", "validation BLEU-4",
                   (("BLEU-1", "bleu1", 2), ("BLEU-4", "bleu4", 2),
                    ("localisation %", "localisation", 1)), _captioning_data)),
    Recipe(
        "lm", "language-model", "language modelling", lm.LMRunConfig, lm.LanguageModelTask,
        lm.load_language_model, lm_describe.describe, lm_describe.architecture,
        {"train": "attnlab lm train", "translate": "attnlab lm evaluate",
         "predict": "attnlab lm evaluate", "evaluate": "attnlab lm evaluate",
         "plot": "attnlab lm plot", "report": "attnlab lm evaluate"},
        ("attnlab lm evaluate --run MODEL --text FILE",
         'attnlab lm plot --run MODEL "a sentence"'),
        'attnlab.load("MODEL").perplexity(["a sentence"]).perplexity',
        "/api/read",
        Comparison(lm_comparison.comparison_scores, "perplexity", "validation perplexity",
                   (("test perplexity", "perplexity", 2),))),
)}


def recipe(name: str) -> Recipe:
    """The record of task `name`; a CheckpointError naming the known tasks otherwise."""
    if name not in RECIPES:
        raise CheckpointError(f"no task {name!r} in this attnlab; it knows "
                              f"{', '.join(RECIPES)}")
    return RECIPES[name]


def recipe_of_run(directory: str | os.PathLike, checkpoint: str | None = None) -> Recipe:
    """The record of the task a run directory (or exported model) was trained for, as its
    checkpoint's meta.json records it; one CheckpointError sentence when it is none we know."""
    task = run_task(directory, checkpoint)
    if task not in RECIPES:
        raise CheckpointError(f"{directory} holds a {task!r} model; attnlab reads "
                              f"{', '.join(recipe.title for recipe in RECIPES.values())} runs")
    return RECIPES[task]
