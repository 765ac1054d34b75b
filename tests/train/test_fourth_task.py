"""One record per task (attnlab.recipes): a throw-away fourth task, added as one record and a few
classes here (its "recipe package": config, training task, Run), is trained with `attnlab train
CONFIG`, evaluated with `attnlab evaluate`, plotted, compared, served at its endpoint, exported
and loaded by the existing code, with nothing else changed; and every record (shipped or not)
names only commands the parser has and an endpoint the explorer serves."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
import torch
import yaml
from fastapi.testclient import TestClient
from toy_task import ToyModel, ToyTask

import attnlab
from attnlab.cli import build_parser, main
from attnlab.compare import load_suite
from attnlab.compare.report.tables import results_rows
from attnlab.compare.run.runner import RunOptions, run_suite
from attnlab.errors import UserError
from attnlab.hub import export_model
from attnlab.recipes import RECIPES, Comparison, Recipe, recipe_of_run
from attnlab.serve import Limits, create_app
from attnlab.serve.runs import load_served
from attnlab.train.config import ExperimentConfig
from attnlab.train.runs import load_weights, open_run
from attnlab.train.trained import Run

pytestmark = pytest.mark.slow  # it trains (tiny models, a few seconds)


# --- the toy task's "recipe package" -------------------------------------------------------
@dataclass
class ToyModelConfig:
    dim: int = 8


@dataclass
class ToyRunConfig(ExperimentConfig):
    model: ToyModelConfig = field(default_factory=ToyModelConfig)
    task: str = "toy"


class ToyRecipeTask(ToyTask):
    run_files: ClassVar[tuple[str, ...]] = ()
    guides_attention: ClassVar[bool] = False

    def __init__(self, config: ToyRunConfig, files=None, log=print):
        super().__init__(dim=config.model.dim, dropout=0.0)

    def signature(self):
        return {"task": "toy", **super().signature()}


@dataclass
class ToyEvaluation:
    norm: float

    def format(self) -> str:
        return f"embedding norm {self.norm:.4f}"

    def to_dict(self) -> dict[str, Any]:
        return {"norm": self.norm}

    def outputs(self):
        return {}

    def timing(self):
        return None


@dataclass(repr=False)
class ToyRun(Run):
    task: ClassVar[str] = "toy"
    kind: ClassVar[str] = "a toy model"
    verbs: ClassVar[dict[str, str]] = {"norm": ".norm()"}
    evaluate_options: ClassVar[tuple[str, ...]] = ("limit",)

    model: ToyModel

    @classmethod
    def load(cls, path, checkpoint=None, *, device="cpu"):
        run = open_run(path, ToyRunConfig, checkpoint, task="toy")
        model = load_weights(run, ToyModel(11, run.config.model.dim, 0.0), device=device)
        return cls(run.path, run.checkpoint, run.meta, run.config, model)

    def norm(self) -> float:
        return float(self.model.embedding.weight.detach().norm())

    def evaluate(self, *, limit=None, progress=False, log=print, **overrides):
        return ToyEvaluation(self.norm())

    def answer(self, request):
        scale = (request.model_extra or {}).get("scale")  # the Run declares no fields
        if not isinstance(scale, (int, float)):
            raise UserError("field 'scale' must be a number")
        return {"norm": self.norm() * scale}


def toy_scores(run_dir, evaluate, example, rwth=None, progress=False):
    return {"scores": {"norm": ToyRun.load(run_dir).norm()}}


TOY = Recipe(
    name="toy", title="toy", purpose="predicting random tokens", config_class=ToyRunConfig,
    task_class=ToyRecipeTask, run_class=ToyRun, describe=lambda model: f"toy / dim {model.dim}",
    architecture=lambda model: [("model", f"tied, dim {model.dim}")],
    commands={"train": "attnlab train", "predict": "attnlab evaluate",
              "evaluate": "attnlab evaluate", "plot": "attnlab plot",
              "report": "attnlab evaluate"},
    uses=("attnlab evaluate --run MODEL",), python='attnlab.load("MODEL").norm()',
    endpoint="/api/toy",
    comparison=Comparison(toy_scores, "loss", "validation loss", (("embedding norm", "norm", 3),)))

TRAIN = {"max_steps": 6, "max_epochs": None, "max_minutes": None, "validate_every": 3,
         "checkpoint_every": 3, "log_every": 3, "tensorboard": False, "threads": 1,
         "device": "cpu", "early_stopping": {"metric": "loss", "mode": "min"}}


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(RECIPES, "toy", TOY)
    return TOY


def toy_config(tmp_path: Path, **model: int) -> Path:
    config = tmp_path / "toy.yaml"
    config.write_text(yaml.safe_dump({"task": "toy", "model": model, "train": TRAIN}))
    return config


# --- what the front-ends know of a task: its record's names, which must exist ---------------
def missing_commands(recipe: Recipe, parser: argparse.ArgumentParser) -> list[str]:
    """The commands of the record that the parser does not have ("attnlab caption predict")."""
    missing = []
    uses = (use.split("attnlab", 1)[1].split(" --")[0] for use in recipe.uses)
    for command in {*recipe.commands.values(), *(f"attnlab{use}" for use in uses)}:
        words = command.split()[1:]
        current: argparse.ArgumentParser | None = parser
        for word in words:
            if current is None:
                break
            choices = next((action.choices for action in current._actions
                            if isinstance(action, argparse._SubParsersAction)), None)
            if choices is None:
                break  # an argument after the command, e.g. MODEL or IMAGE
            current = choices.get(word)
        if current is None:
            missing.append(command)
    return sorted(missing)


def served_paths(runs: dict) -> set[str]:
    app = create_app(runs, Limits())
    return {getattr(route, "path", "") for route in app.routes}


def test_the_check_of_command_names_can_fail(toy):
    wrong = replace(TOY, commands={**TOY.commands, "predict": "attnlab toy predict"})
    assert missing_commands(wrong, build_parser()) == ["attnlab toy predict"]
    assert missing_commands(TOY, build_parser()) == []


@pytest.mark.parametrize("name", ["translation", "captioning", "lm"])
def test_every_shipped_record_names_what_exists(name):
    recipe = RECIPES[name]
    assert missing_commands(recipe, build_parser()) == []
    assert recipe.run_class.task == name and recipe.config_class().task == name
    assert {"train", "predict", "evaluate", "plot", "report"} <= set(recipe.commands)
    default = recipe.config_class().model
    assert recipe.describe(default) and recipe.architecture(default)
    assert json.dumps(recipe.comparison.data_keys("folder"))


def test_a_fourth_task_is_one_record(toy, tmp_path, capsys):
    # trained through `attnlab train CONFIG`, the task read from the config's task: key
    run = tmp_path / "runs" / "toy"
    assert main(["train", str(toy_config(tmp_path, dim=4)), "--run", str(run), "--quiet"]) == 0
    assert recipe_of_run(run) is toy
    # evaluated through `attnlab evaluate`, and a flag it does not take refused in a sentence
    capsys.readouterr()
    assert main(["evaluate", "--run", str(run), "--limit", "2", "--output",
                 str(tmp_path / "e.json")]) == 0
    norm = ToyRun.load(run).norm()
    assert f"embedding norm {norm:.4f}" in capsys.readouterr().out
    assert json.loads((tmp_path / "e.json").read_text()) == {"norm": norm}
    assert main(["evaluate", "--run", str(run), "--split", "test"]) == 2
    assert "--split is not an option for a toy model" in capsys.readouterr().err
    # plotted: the Run has no figure, and says so in one sentence
    assert main(["plot", "--run", str(run), "anything", "--output",
                 str(tmp_path / "p.png")]) == 2
    assert "this is a toy model, which has no attention figure" in capsys.readouterr().err
    # served at its record's endpoint: the Run's answer; its errors are 422 sentences
    assert toy.endpoint in served_paths({"toy": run})
    with TestClient(create_app({"toy": run}, Limits()), base_url="http://127.0.0.1") as client:
        answer = client.post(toy.endpoint, json={"run": "toy", "scale": 2})
        assert answer.status_code == 200 and answer.json() == pytest.approx({"norm": 2 * norm})
        refused = client.post(toy.endpoint, json={"run": "toy", "scale": "x"})
        assert refused.status_code == 422
        assert refused.json() == {"detail": "field 'scale' must be a number"}
    served = load_served("toy", run)
    assert (served.task, served.mechanism) == ("toy", "toy / dim 4")
    # exported, with its card, and loaded back as its Run
    model = export_model(run, tmp_path / "model").path
    card = (model / "MODEL.md").read_text()
    assert "predicting random tokens" in card and "tied, dim 4" in card
    loaded = attnlab.load(model)
    assert type(loaded) is ToyRun and loaded.norm() == pytest.approx(norm)
    torch.testing.assert_close(loaded.model.embedding.weight,
                               ToyRun.load(run).model.embedding.weight)
    with pytest.raises(AttributeError, match=r"this is a toy model, which has no .translate"):
        loaded.translate(["x"])


def test_a_fourth_task_is_compared(toy, tmp_path):
    config = toy_config(tmp_path)
    suite = {"name": "toy", "task": "toy", "title": "a toy suite", "claim": "none",
             "members": [{"name": "small", "label": "dim 4", "config": str(config),
                          "set": {"model.dim": 4}},
                         {"name": "large", "label": "dim 8", "config": str(config)}]}
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    records = run_suite(load_suite(str(path)), tmp_path / "compare", RunOptions(progress=False),
                        log=lambda _: None)
    assert [record["updates"] for record in records] == [6, 6]
    header, *rows = results_rows("toy", records)
    assert header[1] == "embedding norm"
    assert [row[1] for row in rows] == [f"{record['scores']['norm']:.3f}" for record in records]
