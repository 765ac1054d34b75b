"""The shipped configs and suites by name: each one loads as the config of a task and says in
its first line what it is; names resolve from any directory, mistakes are one sentence."""

from pathlib import Path

import pytest
import yaml

from attnlab import configs
from attnlab.captioning import RunConfig as CaptionRunConfig
from attnlab.config import load_config
from attnlab.errors import ConfigError
from attnlab.lm import LMRunConfig
from attnlab.translation import RunConfig as TranslationRunConfig

TASK_CONFIGS = (TranslationRunConfig, LMRunConfig, CaptionRunConfig)


def test_the_paper_configs_are_shipped_and_no_suite_shares_a_config_name():
    assert {"multi30k-bahdanau", "dates-bahdanau", "lm-multi30k-lstmn", "shapes-soft",
            "flickr8k-soft"} <= set(configs.config_names())
    assert not set(configs.config_names()) & set(configs.suite_names())  # show takes either


@pytest.mark.parametrize("name", configs.config_names())
def test_each_config_loads_as_the_config_of_one_task(name):
    loaded = []
    for cls in TASK_CONFIGS:
        try:
            loaded.append(load_config(configs.config_path(name), cls))
        except ConfigError:
            pass
    assert len(loaded) == 1, f"{name} loads as {[type(c).__module__ for c in loaded]}"


@pytest.mark.parametrize("path", [*configs.FOLDER.glob("*.yaml"),
                                  *configs.SUITE_FOLDER.glob("*.yaml")], ids=lambda p: p.stem)
def test_each_file_starts_with_a_one_line_summary(path):
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# ") and configs.summary(path) == first[2:]
    assert first.rstrip().endswith((".", "?")), "`attnlab config list` shows this line alone"
    assert isinstance(yaml.safe_load(path.read_text(encoding="utf-8")), dict)


def test_the_suites_name_configs_beside_them():
    for name in configs.suite_names():
        suite = yaml.safe_load(configs.suite_path(name).read_text(encoding="utf-8"))
        for member in suite["members"]:
            path = (configs.SUITE_FOLDER / member["config"]).resolve()
            assert path.parent == configs.FOLDER and path.is_file(), member["config"]


def test_a_config_argument_is_a_file_first_then_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shipped = configs.FOLDER / "multi30k-bahdanau.yaml"
    assert configs.config_file("multi30k-bahdanau") == shipped
    assert configs.config_file("multi30k-bahdanau.yaml") == shipped
    Path("multi30k-bahdanau.yaml").write_text("train: {lr: 0.1}\n")   # the user's own copy
    assert configs.config_file("multi30k-bahdanau.yaml") == Path("multi30k-bahdanau.yaml")
    assert configs.config_file(str(shipped)) == shipped


@pytest.mark.parametrize("argument, message", [
    ("multi30k-bahdanu", "no config file multi30k-bahdanu here and no shipped config named "
     "'multi30k-bahdanu'; did you mean 'multi30k-bahdanau'?"),
    ("nothing-like-it.yaml", "no shipped config named 'nothing-like-it' (attnlab config list"),
    ("configs/multi30k-bahdanau.yaml", "config file configs/multi30k-bahdanau.yaml does not "
     "exist; the shipped config of that name is 'multi30k-bahdanau'"),
    ("elsewhere/mine.yaml", "config file elsewhere/mine.yaml does not exist"),
])
def test_a_config_argument_that_is_neither_is_one_sentence(tmp_path, monkeypatch, argument,
                                                            message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as error:
        configs.config_file(argument)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_unknown_shipped_names_suggest_the_closest():
    with pytest.raises(ConfigError, match="no shipped suite named 'mechanism'; did you mean "
                       "'mechanisms'"):
        configs.suite_path("mechanism")
    with pytest.raises(ConfigError, match="no shipped config or suite named 'shapes-sfot'; did "
                       "you mean 'shapes-soft'"):
        configs.shipped_file("shapes-sfot")
    assert configs.shipped_file("lstmn") == configs.SUITE_FOLDER / "lstmn.yaml"
    lstmn_lm = configs.shipped_file("lm-multi30k-lstmn.yaml")
    assert lstmn_lm == configs.FOLDER / "lm-multi30k-lstmn.yaml"
