"""YAML configs: typed dataclasses, helpful errors, dotted overrides, dict round trip."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, make_dataclass
from pathlib import Path
from typing import Literal

import pytest

from attnlab.config import between, config_from_dict, config_to_dict, load_config
from attnlab.configs import config_path
from attnlab.errors import ConfigError
from attnlab.train import TrainConfig


@dataclass
class AttentionConfig:
    score: Literal["dot", "general", "concat"] = "concat"
    window: int | None = None
    sharpness: float | None = None


@dataclass
class ModelConfig:
    hidden: int = 32
    attention: AttentionConfig = field(default_factory=AttentionConfig)
    layers: list[int] = field(default_factory=lambda: [1])


@dataclass
class Experiment:
    name: str
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    vocab: Path | None = None
    extra: dict[str, float] = field(default_factory=dict)


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "x.yaml"
    path.write_text(text)
    return path


def test_yaml_with_overrides(tmp_path):
    path = write(tmp_path, "name: demo\nmodel:\n  attention: {score: general, window: 10}\n"
                           "train:\n  lr: 1e-3\n  betas: [0.8, 0.9]\n")
    overrides = ["train.lr=5e-4", "model.attention.window=null", "model.layers=[1,2]",
                 "train.early_stopping.metric=bleu", "vocab=v.model", "extra.alpha=1"]
    config = load_config(path, Experiment, overrides)
    assert config.train.lr == 5e-4 and config.train.betas == (0.8, 0.9)
    assert config.model.attention == AttentionConfig(score="general", window=None)
    assert config.model.layers == [1, 2] and config.train.early_stopping.metric == "bleu"
    assert config.vocab == Path("v.model") and config.extra == {"alpha": 1.0}


def test_round_trip_through_a_plain_dict():
    config = load_config({"name": "x", "vocab": "v", "model": {"attention": {"sharpness": 2}}},
                         Experiment)
    plain = config_to_dict(config)
    assert plain["train"]["betas"] == [0.9, 0.999] and plain["vocab"] == "v"
    assert config_from_dict(plain, Experiment) == config


@pytest.mark.parametrize("data, message", [
    ({"name": "x", "train": {"learnig_rate": 1}},
     r"config: unknown key 'train\.learnig_rate'; did you mean 'train\.lr'\?"),
    ({"name": "x", "model": {"attention": {"windw": 3}}},
     r"did you mean 'model\.attention\.window'\?"),
    ({"name": "x", "train": {"lr": "fast"}}, r"train\.lr must be a number, got 'fast'"),
    ({"name": "x", "train": {"max_steps": 1.5}}, r"train\.max_steps must be an integer or null"),
    ({"name": "x", "train": {"tensorboard": "yes"}}, "train.tensorboard must be true or false"),
    ({"name": "x", "model": {"attention": {"score": "cosine"}}},
     r"model\.attention\.score must be one of 'dot', 'general', 'concat'; got 'cosine'"),
    ({"name": "x", "model": {"layers": [1, "two"]}}, r"model\.layers\[1\] must be an integer"),
    ({"name": "x", "train": {"betas": [0.9]}}, r"train\.betas must be a list of 2 values"),
    ({"name": 3}, "name must be a string"),
    ({}, "missing required key 'name'"),
])
def test_mistakes_name_the_key(data, message):
    with pytest.raises(ConfigError, match=message):
        load_config(data, Experiment)


def test_file_errors(tmp_path):
    with pytest.raises(ConfigError, match="x.yaml: unknown key 'modle'; did you mean 'model'"):
        load_config(write(tmp_path, "name: a\nmodle: {}\n"), Experiment)
    with pytest.raises(ConfigError, match="x.yaml: invalid YAML at line 3, column 12: mapping"):
        load_config(write(tmp_path, "name: a\nmodel:\n  hidden: 1: 2\n"), Experiment)
    with pytest.raises(ConfigError, match="duplicate key 'name'"):
        load_config(write(tmp_path, "name: a\nname: b\n"), Experiment)
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(write(tmp_path, "- 1\n"), Experiment)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml", Experiment)


@pytest.mark.parametrize("override, message", [
    ("train.lr", "expects dotted.key=value"),
    ("train.lerning_rate=1", r"--set train\.lerning_rate=1: unknown key 'train\.lerning_rate'"),
    ("train.lr=fast", r"--set train\.lr=fast: train\.lr must be a number"),
    ("name.first=a", "name has no sub-keys"),
    ("train.schedule.kind=cosine", "must be one of 'constant', 'plateau', 'warmup_decay'"),
])
def test_override_mistakes_name_the_override(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config({"name": "x"}, Experiment, [override])


@pytest.mark.parametrize("override", ["train.lr=nan", "train.lr=.nan", "train.lr=inf",
                                      "train.lr=-.inf", "train.lr=1e999", "train.lr=.Inf",
                                      "extra.alpha=nan"])
def test_a_number_that_is_not_finite_is_refused_in_an_override(override):
    # before: --set train.lr=nan trained with a NaN learning rate
    key = override.partition("=")[0].replace(".", r"\.")
    with pytest.raises(ConfigError, match=f"--set .*: {key} must be a finite number, got"):
        load_config({"name": "x"}, Experiment, [override])


@pytest.mark.parametrize(("text", "message"), [
    ("name: a\ntrain:\n  lr: .nan\n", r"x\.yaml: train\.lr must be a finite number, got nan"),
    ("name: a\ntrain:\n  lr: -.inf\n", "train.lr must be a finite number, got -inf"),
    ("name: a\ntrain:\n  lr: inf\n", "train.lr must be a finite number, got 'inf'"),
    ("name: a\ntrain:\n  clip_norm: .inf\n",
     "train.clip_norm must be a finite number or null, got inf"),
    ("name: a\ntrain:\n  max_steps: .inf\n",
     "train.max_steps must be a finite number or null, got inf"),
    ("name: a\nmodel:\n  attention:\n    sharpness: .nan\n",
     "model.attention.sharpness must be a finite number or null, got nan"),
    ("name: a\nmodel:\n  hidden: .inf\n", "model.hidden must be a finite number, got inf"),
])
def test_a_number_that_is_not_finite_is_refused_in_a_file(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text), Experiment)


def test_bounded_fields_refuse_what_is_not_finite():
    from attnlab.translation import RunConfig

    for override in ("decode.max_len_ratio=.inf", "decode.alpha=.nan",
                     "model.decoder.dropout=.nan"):
        with pytest.raises(ConfigError, match="must be a finite number"):
            load_config(config_path("multi30k-bahdanau"), RunConfig, [override])
    Bounded = make_dataclass("Bounded", [("x", float, field(default=0.0,
                                                               metadata=between(0, 10)))])
    assert load_config({"x": 10}, Bounded).x == 10.0
    with pytest.raises(ConfigError, match="x: must be from 0 to 10, got 1e"):
        load_config({"x": 1e308}, Bounded)


def test_unions_try_each_member():
    Either = make_dataclass("Either", [("x", int | None, None), ("y", int | str, 0)])
    assert load_config({"x": None, "y": "a"}, Either) == Either(None, "a")
    assert load_config({"y": 2}, Either) == Either(None, 2)
    with pytest.raises(ConfigError, match="x must be an integer or null, got 'a'"):
        load_config({"x": "a"}, Either)


def test_score_names_are_checked_when_the_yaml_loads(tmp_path):
    from attnlab.translation import RunConfig

    path = tmp_path / "c.yaml"
    path.write_text("model:\n  decoder:\n    attention:\n      score: addtive\n")
    with pytest.raises(ConfigError, match=r"c.yaml: model.decoder.attention.score: unknown "
                                          r"score 'addtive'; did you mean 'additive'"):
        load_config(path, RunConfig)
    with pytest.raises(ConfigError, match=r"model.encoder.score: unknown score 'dott'"):
        load_config({"model": {"encoder": {"score": "dott"}}}, RunConfig)

@pytest.mark.parametrize(("attention", "message"), [
    ({"mechanism": "local-p"}, r"model\.decoder\.attention: mechanism local-p needs window"),
    ({"mechanism": "local-m"}, r"model\.decoder\.attention: mechanism local-m needs window"),
    ({"window": 3}, r"model\.decoder\.attention: window is the half-width of local-m and "
                    r"local-p; mechanism global has none"),
    ({"mechanism": "hard", "window": 3}, r"window is the half-width .* mechanism hard has none"),
    ({"mechanism": "local_p", "window": 3}, r"model\.decoder\.attention\.mechanism: unknown "
                                            r"mechanism 'local_p'; did you mean 'local-p'\?"),
    ({"predictive": True}, r"unknown key 'model\.decoder\.attention\.predictive'"),
])
def test_the_mechanism_is_named_and_its_window_checked(attention, message):
    """A local mechanism without its window, a window without a local mechanism, a misspelt
    mechanism: one sentence naming the keys, never a silent fallback to global attention."""
    from attnlab.translation import RunConfig

    with pytest.raises(ConfigError, match=message) as raised:
        load_config({"model": {"decoder": {"attention": attention}}}, RunConfig)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(("name", "mechanism", "window"), [
    ("multi30k-local-p", "local-p", 10), ("multi30k-local-m", "local-m", 10),
    ("multi30k-bahdanau", "global", None), ("shapes-hard", "hard", None)])
def test_shipped_configs_name_their_mechanism(name, mechanism, window):
    from attnlab.captioning.config import RunConfig as CaptionRunConfig
    from attnlab.configs import shipped_file
    from attnlab.translation import RunConfig

    cls = CaptionRunConfig if name.startswith("shapes") else RunConfig
    attention = load_config(shipped_file(name), cls).model.decoder.attention
    assert (attention.mechanism, attention.window) == (mechanism, window)


@pytest.mark.parametrize(("override", "message"), [
    ("model.decoder.hidden_dim=0", "model.decoder.hidden_dim: must be positive, got 0"),
    ("model.encoder.layers=-1", "model.encoder.layers: must be positive, got -1"),
    ("model.decoder.dropout=1.5", r"model.decoder.dropout: must be in \[0, 1\), got 1.5"),
    ("model.decoder.attention.window=-2", "model.decoder.attention.window: must be >= 0"),
    ("data.batch_size=0", "data.batch_size: must be positive, got 0"),
    ("decode.beam=0", "decode.beam: must be positive, got 0"),
])
def test_sizes_that_are_not_positive_are_refused_when_the_config_loads(override, message):
    from attnlab.translation import RunConfig

    with pytest.raises(ConfigError, match=message):
        load_config(config_path("multi30k-bahdanau"), RunConfig, [override])


def test_caption_and_lm_sizes_are_checked_too():
    from attnlab.captioning import RunConfig as CaptionConfig
    from attnlab.lm import LMRunConfig

    with pytest.raises(ConfigError, match="data.image_size: must be positive, got 0"):
        load_config({"data": {"image_size": 0}}, CaptionConfig)
    with pytest.raises(ConfigError, match="model.hidden_dim: must be positive, got 0"):
        load_config({"model": {"hidden_dim": 0}}, LMRunConfig)


def test_decode_penalties_past_their_range_are_refused_as_the_config_loads():
    """alpha and beta above 10 are refused by the YAML's checks, before a run folder exists,
    not at the first validation (attnlab.decode.penalties's ALPHA_MAX, BETA_MAX)."""
    from attnlab.translation.config import RunConfig

    for key in ("alpha", "beta"):
        with pytest.raises(ConfigError, match=f"decode.{key}: must be from 0 to 10, got 20"):
            config_from_dict({"decode": {key: 20}}, RunConfig)


# --- every key that names a choice, in every task's config -----------------------------------
def string_choices(cls, prefix=""):
    """(dotted key, a valid choice) of every string key of `cls` (a recipe's config) that names
    an entry of a table: a Literal of strings, a string with a check (score, mechanism), or
    train.early_stopping.metric (the task's validation figures)."""
    import dataclasses
    import typing

    from attnlab.config import _field_hints, _without_none

    for item in dataclasses.fields(cls):
        hint, key = _without_none(_field_hints(cls)[item.name]), f"{prefix}{item.name}"
        if dataclasses.is_dataclass(hint):
            yield from string_choices(hint, key + ".")
        elif typing.get_origin(hint) is Literal and isinstance(typing.get_args(hint)[0], str):
            yield key, typing.get_args(hint)[-1]
        elif hint is str and "check" in item.metadata:
            yield key, item.default


def every_choice():
    from attnlab.recipes import RECIPES

    for name, recipe in sorted(RECIPES.items()):
        cls = recipe.config_class
        for key, choice in string_choices(cls):
            yield pytest.param(cls, key, choice, id=f"{name}:{key}")
        yield pytest.param(cls, "train.early_stopping.metric", cls.validation_metrics[-1],
                           id=f"{name}:train.early_stopping.metric")


# The keys beside which a translation choice is valid: a transformer side needs its heads and
# one width (and the decoder the scaled_dot score).
TRANSFORMER = {"kind": "transformer", "heads": 2, "embedding_dim": 8, "hidden_dim": 8}
COMPANIONS = {
    "model.encoder": TRANSFORMER,
    "model.decoder": {**TRANSFORMER, "attention": {"score": "scaled_dot"}},
}


def nested(key, value, cls=None):
    data = value
    for part in reversed(key.split(".")):
        data = {part: data}
    if key.startswith("train.guided_alignment."):
        data["train"]["guided_alignment"]["links"] = "links.txt"
    section, name = key.rsplit(".", 1) if "." in key else ("", key)
    if section in COMPANIONS and name == "kind" and getattr(cls, "task", "") == "translation":
        data["model"][section.split(".")[1]] = {**COMPANIONS[section], name: value}
    return data


@pytest.mark.parametrize("cls, key, choice", list(every_choice()))
def test_every_choice_of_every_task_is_one_sentence_given_a_list_a_number_or_a_typo(cls, key,
                                                                                   choice):
    load_config(nested(key, choice, cls), cls)   # the valid choice loads
    for wrong in ([choice], 3, {choice: 1}):
        with pytest.raises(ConfigError, match=rf"^config: {key}\b.*{re.escape(repr(wrong))}"):
            load_config(nested(key, wrong, cls), cls)
    typo = choice[0] + choice        # 'bbahdanau'
    with pytest.raises(ConfigError, match=rf"^config: {key}\b.*; did you mean "
                                          rf"{re.escape(repr(choice))}\?"):
        load_config(nested(key, typo, cls), cls)


def test_every_top_level_key_of_every_task_is_of_its_type(tmp_path):
    import dataclasses

    from attnlab.recipes import RECIPES

    for recipe in RECIPES.values():
        for item in dataclasses.fields(recipe.config_class):
            for wrong in (["x"], 3) if item.name != "task" else (["x"], 3, None):
                with pytest.raises(ConfigError, match=rf"^config: {item.name} must be "):
                    load_config({item.name: wrong}, recipe.config_class)


@pytest.mark.parametrize("task, says", [
    ("[translation]", "t.yaml: task must be a task's name (translation, captioning, lm), got "
                      "['translation']"),
    ("3", "t.yaml: task must be a task's name (translation, captioning, lm), got 3"),
    ("{lm: 1}", "t.yaml: task must be a task's name"),
    ("captionning", "t.yaml: task 'captionning' is none that attnlab trains; it knows "
                    "translation, captioning, lm; did you mean 'captioning'?"),
])
def test_the_task_key_is_a_tasks_name_with_did_you_mean(tmp_path, task, says):
    from attnlab.cli import main
    from attnlab.recipes import recipe_of_config

    path = tmp_path / "t.yaml"
    path.write_text(f"task: {task}\n")
    with pytest.raises(ConfigError) as error:
        recipe_of_config(path)
    assert str(error.value).startswith(str(tmp_path / says))
    with pytest.raises(ConfigError, match="--set task=lmm: task 'lmm' is none that attnlab "
                                          "trains; it knows translation, captioning, lm; did "
                                          "you mean 'lm'?"):
        recipe_of_config(config_path("dates-bahdanau"), ["task=lmm"])
    assert main(["train", str(path), "--run", str(tmp_path / "run")]) == 2
    assert not (tmp_path / "run").exists()
