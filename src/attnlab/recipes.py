"""Every task attnlab trains, as one record each, in one table: what the command line, the
explorer (serve), `attnlab compare` and the hub (export, `attnlab.load`, model cards) know of a
task, and the only place they learn it.

    run = load("runs/x")                        # the task's Run: attnlab.load
    recipe = recipe_of_run("runs/x")            # or RECIPES["translation"]
    recipe.describe(run.config.model)           # "bahdanau / additive, global"

A task's name is its one spelling everywhere: meta.json, a config's `task:` key, suites, the
API, messages. Adding a task is one record here plus its recipe package (config, task, Run,
describe, comparison); the command line, the explorer, compare and export read it from here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from attnlab import captioning, lm, translation
from attnlab.captioning import comparison as captioning_comparison
from attnlab.captioning import describe as captioning_describe
from attnlab.config import did_you_mean, read_yaml
from attnlab.errors import CheckpointError, ConfigError, UserError
from attnlab.lm import comparison as lm_comparison
from attnlab.lm import describe as lm_describe
from attnlab.lm import explanation_scores as lm_explanation
from attnlab.train import run_task
from attnlab.train.config import ExperimentConfig
from attnlab.train.experiment import TaskFactory
from attnlab.train.trained import Run
from attnlab.translation import comparison as translation_comparison
from attnlab.translation import describe as translation_describe
from attnlab.translation import explanation_scores as translation_explanation
from attnlab.translation import findings as translation_findings

# (column header, score key in a member's "scores", digits)
ScoreColumn = tuple[str, str, int]


@dataclass(frozen=True)
class Comparison:
    """What `attnlab compare` needs of a task. scores(run_dir, evaluate options, example
    sentence, rwth folder, progress) -> the member's figures ({"scores": {...}, ...});
    curve_metric: the validation metric drawn against training minutes (and its label);
    columns: the results table's score columns, the first the main score; data_keys(folder):
    the config keys that point a member at a data folder; explain(run_dir, the suite's explain
    block, evaluate options, rwth folder, progress) -> the run's explanation record
    (`attnlab compare --explain`), None for a task without one."""

    scores: Callable[..., dict[str, Any]]
    curve_metric: str
    curve_label: str
    columns: tuple[ScoreColumn, ...]
    data_keys: Callable[[str], dict[str, str]] = lambda folder: {"data.dir": str(folder)}
    explain: Callable[..., dict[str, Any]] | None = None
    # what its attention reads, which picks the report's explanation page and claims: "source"
    # (a decoder over the source) or "itself" (self-attention over earlier words)
    explanation_reads: str = "source"
    # the report's sentences on the members (their records), else their main score listed
    findings: Callable[[list[dict]], list[str]] | None = None
    # the version of the code behind `explain`: a record another version made is made again
    explain_version: int = 1
    # the metrics a suite's claim (`expect: ... metric: M`) may name: the score keys its
    # records hold, and "aer" where its runs are scored on gold links; () for the columns' keys
    claim_metrics: tuple[str, ...] = ()

    def metrics(self) -> tuple[str, ...]:
        """The metrics a claim on this task may name (a suite is checked against them)."""
        return self.claim_metrics or tuple(key for _, key, _ in self.columns)


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """One task. name: its one spelling; title: in a sentence ("a language-model run");
    purpose: what its models are for ("language modelling"); config_class / task_class /
    run_class: its experiment config, training task and trained Run (whose verbs every
    front-end calls); describe(model config): its attention in a few words;
    architecture(model config): the model card's (part, what) rows; commands: verb -> the
    attnlab command that does it for this task ("train", "predict", "evaluate", "plot",
    "report"); uses: example commands and python: the same from Python (MODEL stands for the
    folder); endpoint: the explorer's API route; comparison: what compare needs; data_title(the
    config's data section): what a model card's title adds to `purpose` (" (de -> en)")."""

    name: str
    title: str
    purpose: str
    config_class: type[ExperimentConfig]
    task_class: TaskFactory
    run_class: type[Run]
    describe: Callable[[Any], str]
    architecture: Callable[[Any], list[tuple[str, str]]]
    commands: Mapping[str, str]
    uses: tuple[str, ...]
    python: str
    endpoint: str
    comparison: Comparison
    data_title: Callable[[Mapping[str, Any]], str] = lambda data: ""

    def load(self, path: str | os.PathLike | Sequence[str | os.PathLike],
             checkpoint: str | None = None, *, device: str | torch.device = "cpu") -> Run:
        """The task's Run of `path` (`checkpoint`: best, last, or None for best-else-last)."""
        return self.run_class.load(path, checkpoint, device=device)  # type: ignore[arg-type]

    @property
    def quantizable(self) -> bool:
        """Whether `--quantize int8` applies (its Run has .quantized)."""
        return self.run_class.quantizable

    @property
    def run_files(self) -> tuple[str, ...]:
        """The task's own files in a run directory (its vocabularies)."""
        return tuple(self.task_class.run_files)


def _captioning_data(folder: str) -> dict[str, str]:
    return {"data.json": str(Path(folder) / "dataset_shapes.json"),
            "data.images": str(Path(folder) / "images")}


RECIPES: dict[str, Recipe] = {recipe.name: recipe for recipe in (
    Recipe(
        name="translation", title="translation", purpose="translation",
        config_class=translation.RunConfig, task_class=translation.TranslationTask,
        run_class=translation.TranslationRun, describe=translation_describe.describe,
        architecture=translation_describe.architecture,
        commands={"train": "attnlab train", "predict": "attnlab translate",
                  "evaluate": "attnlab evaluate", "plot": "attnlab plot",
                  "report": "attnlab report"},
        uses=('echo "a sentence" | attnlab translate --run MODEL --beam 5',
              'attnlab plot --run MODEL "a sentence" --output heatmap.png',
              "attnlab evaluate --run MODEL --src SOURCE --ref REFERENCE",
              "attnlab report --run MODEL --src SOURCE --ref REFERENCE"),
        python='attnlab.load("MODEL").translate(["a sentence"], beam=5)[0].text',
        endpoint="/api/translate",
        data_title=lambda data: f" ({data.get('src_lang')} -> {data.get('tgt_lang')})",
        comparison=Comparison(translation_comparison.comparison_scores, "bleu",
                              "validation BLEU", (("BLEU", "bleu", 2), ("chrF", "chrf", 2),
                                                  ("exact match %", "exact_match", 1)),
                              explain=translation_explanation.explanation_scores,
                              findings=translation_findings.findings,
                              explain_version=translation_explanation.VERSION,
                              claim_metrics=translation_comparison.CLAIM_METRICS)),
    Recipe(
        name="captioning", title="captioning", purpose="image captioning",
        config_class=captioning.RunConfig, task_class=captioning.CaptionTask,
        run_class=captioning.CaptioningRun, describe=captioning_describe.describe,
        architecture=captioning_describe.architecture,
        commands={"train": "attnlab train", "predict": "attnlab caption predict",
                  "evaluate": "attnlab evaluate", "plot": "attnlab plot",
                  "report": "attnlab evaluate"},
        uses=("attnlab caption predict --run MODEL IMAGE",
              "attnlab plot --run MODEL IMAGE --output where.png",
              "attnlab evaluate --run MODEL"),
        python='attnlab.load("MODEL").caption(["image.png"])[0].text',
        endpoint="/api/caption",
        comparison=Comparison(captioning_comparison.comparison_scores, "bleu4",
                              "validation BLEU-4",
                              (("BLEU-1", "bleu1", 2), ("BLEU-4", "bleu4", 2),
                               ("localisation %", "localisation", 1)), _captioning_data,
                              findings=captioning_comparison.findings,
                              claim_metrics=captioning_comparison.CLAIM_METRICS)),
    Recipe(
        name="lm", title="language-model", purpose="language modelling",
        config_class=lm.LMRunConfig, task_class=lm.LanguageModelTask,
        run_class=lm.LanguageModelRun, describe=lm_describe.describe,
        architecture=lm_describe.architecture,
        commands={"train": "attnlab train", "predict": "attnlab evaluate",
                  "evaluate": "attnlab evaluate", "plot": "attnlab plot",
                  "report": "attnlab evaluate"},
        uses=("attnlab evaluate --run MODEL --text FILE",
              'attnlab plot --run MODEL "a sentence"'),
        python='attnlab.load("MODEL").perplexity(["a sentence"]).perplexity',
        endpoint="/api/read",
        comparison=Comparison(lm_comparison.comparison_scores, "perplexity",
                              "validation perplexity", (("test perplexity", "perplexity", 2),),
                              explain=lm_explanation.explanation_scores,
                              explanation_reads="itself", findings=lm_comparison.findings,
                              explain_version=lm_explanation.VERSION)),
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


DEFAULT_TASK = "translation"  # what a config without a `task:` key trains


def recipe_of_config(path: str | os.PathLike, overrides: Sequence[str] = (),
                     default: str | None = None) -> Recipe:
    """The record of the task a YAML config trains: its `task:` key (a `task=NAME` override
    wins), `default` (else translation) when it has none; a ConfigError naming the file (or
    the override) and the tasks, with the closest, otherwise."""
    raw = read_yaml(Path(path))
    name, origin = raw.get("task", default or DEFAULT_TASK), f"{path}: task"
    for override in overrides:
        key, _, value = override.partition("=")
        if key.strip() == "task":
            name, origin = value.strip(), f"--set {override}: task"
    if not isinstance(name, str):
        raise ConfigError(f"{origin} must be a task's name ({', '.join(RECIPES)}), got "
                          f"{name!r}")
    if name not in RECIPES:
        raise ConfigError(f"{origin} {name!r} is none that attnlab trains; it knows "
                          f"{', '.join(RECIPES)}{did_you_mean(name, RECIPES)}")
    return RECIPES[name]


def load(path: str | os.PathLike | Sequence[str | os.PathLike], *,
         checkpoint: str | None = None, device: str | torch.device = "cpu") -> Run:
    """A run directory or a model directory `attnlab export` wrote, loaded as its task's Run
    (TranslationRun, CaptioningRun, LanguageModelRun...), the task read from its checkpoint.
    A list of several runs is one Run over their ensemble, where the task has one (translation;
    CheckpointError otherwise, and when their vocabularies differ)."""
    if isinstance(path, (str, bytes, os.PathLike)):
        paths = [path]
    else:
        paths = list(path)
        if not paths:
            raise UserError("attnlab.load of a list needs at least one path")
    recipes = [recipe_of_run(one, checkpoint) for one in paths]
    first = recipes[0]
    for one, recipe in zip(paths, recipes, strict=True):
        if recipe is not first:
            raise CheckpointError(f"{one} is a {recipe.title} run and {paths[0]} a "
                                  f"{first.title} run: an ensemble is of one task's runs")
    if len(paths) > 1 and not first.run_class.ensembles:
        raise CheckpointError(f"{paths[0]} is a {first.title} run: attnlab.load of several "
                              f"paths makes an ensemble of translation runs only")
    return first.load(paths[0] if len(paths) == 1 else paths, checkpoint, device=device)
