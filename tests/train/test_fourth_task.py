"""One record per task (attnlab.recipes): a throw-away fourth task, added as one record and a few
classes here (its "recipe package"), is trained, compared, served, exported, loaded and described
by the existing code, with nothing else changed; and every shipped task has a complete record."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch
import yaml
from toy_task import ToyModel, ToyTask

import attnlab
from attnlab.cli.options import check_task
from attnlab.compare import load_suite
from attnlab.compare.runner import RunOptions, run_suite
from attnlab.compare.tables import results_rows
from attnlab.errors import CheckpointError
from attnlab.hub import export_model
from attnlab.hub.loaded import LoadedModel
from attnlab.recipes import RECIPES, Comparison, Recipe, recipe_of_run
from attnlab.serve.runs import load_served
from attnlab.train.config import ExperimentConfig
from attnlab.train.runs import load_weights, open_run


# --- the toy task's "recipe package" -------------------------------------------------------
@dataclass
class ToyModelConfig:
    dim: int = 8


@dataclass
class ToyRunConfig(ExperimentConfig):
    model: ToyModelConfig = field(default_factory=ToyModelConfig)


class ToyRecipeTask(ToyTask):
    def __init__(self, config: ToyRunConfig, files=None, log=print):
        super().__init__(dim=config.model.dim, dropout=0.0)

    def signature(self):
        return {"task": "toy", **super().signature()}


@dataclass
class TrainedToy:
    config: ToyRunConfig
    model: ToyModel


def load_toy(directory, checkpoint=None, device="cpu"):
    run = open_run(directory, ToyRunConfig, checkpoint, task="toy")
    model = load_weights(run, ToyModel(11, run.config.model.dim, 0.0), device=device)
    return TrainedToy(run.config, model)


def toy_scores(run_dir, evaluate, example, rwth=None, progress=False):
    trained = load_toy(run_dir)
    return {"scores": {"norm": float(trained.model.embedding.weight.detach().norm())}}


TOY = Recipe(
    "toy", "toy", "predicting random tokens", ToyRunConfig, ToyRecipeTask, load_toy,
    lambda model: f"toy / dim {model.dim}", lambda model: [("model", f"tied, dim {model.dim}")],
    {"train": "attnlab toy train", "translate": "attnlab toy predict",
     "predict": "attnlab toy predict", "evaluate": "attnlab toy evaluate",
     "plot": "attnlab toy plot", "report": "attnlab toy evaluate"},
    ("attnlab toy predict --run MODEL",), 'attnlab.load("MODEL").trained.model', "/api/toy",
    Comparison(toy_scores, "loss", "validation loss", (("embedding norm", "norm", 3),)))


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(RECIPES, "toy", TOY)
    return TOY


def toy_suite(tmp_path: Path) -> Path:
    config = tmp_path / "toy.yaml"
    config.write_text(yaml.safe_dump({"train": {
        "max_steps": 6, "max_epochs": None, "max_minutes": None, "validate_every": 3,
        "checkpoint_every": 3, "log_every": 3, "tensorboard": False, "threads": 1,
        "device": "cpu", "early_stopping": {"metric": "loss", "mode": "min"}}}))
    suite = {"name": "toy", "task": "toy", "title": "a toy suite", "claim": "none",
             "members": [{"name": "small", "label": "dim 4", "config": str(config),
                          "set": {"model.dim": 4}},
                         {"name": "large", "label": "dim 8", "config": str(config)}]}
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def test_a_fourth_task_is_one_record(toy, tmp_path):
    # compared: trained and scored through the record alone
    suite = load_suite(str(toy_suite(tmp_path)))
    records = run_suite(suite, tmp_path / "compare", RunOptions(progress=False),
                        log=lambda _: None)
    assert [record["updates"] for record in records] == [6, 6]
    header, *rows = results_rows("toy", records)
    assert header[1] == "embedding norm"
    assert [row[1] for row in rows] == [f"{record['scores']['norm']:.3f}" for record in records]
    run = tmp_path / "compare" / "small" / "seed-1"
    assert recipe_of_run(run) is toy
    # served and described
    served = load_served("small", run)
    assert (served.task, served.mechanism) == ("toy", "toy / dim 4")
    # exported, with its card, and loaded back
    model = export_model(run, tmp_path / "model").path
    card = (model / "MODEL.md").read_text()
    assert "predicting random tokens" in card and "tied, dim 4" in card
    assert "attnlab toy train config.json" in card
    loaded = attnlab.load(model)
    assert type(loaded) is LoadedModel and isinstance(loaded.trained, TrainedToy)
    torch.testing.assert_close(loaded.model.embedding.weight,
                               load_toy(run).model.embedding.weight)
    # the command line names its commands
    with pytest.raises(CheckpointError, match=r"is a toy run, not a translation run; use "
                                              r"attnlab toy evaluate --run"):
        check_task(str(run), None, "evaluate")


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_shipped_record_is_complete(name):
    recipe = RECIPES[name]
    assert recipe.name == name and recipe.endpoint.startswith("/api/")
    assert {"train", "translate", "predict", "evaluate", "plot", "report"} <= set(
        recipe.commands)
    assert recipe.comparison.columns and recipe.run_files
    default = recipe.config_class().model
    assert recipe.describe(default) and recipe.architecture(default)
    assert json.dumps(recipe.comparison.data_keys("folder"))
