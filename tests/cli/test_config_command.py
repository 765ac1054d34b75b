"""`attnlab config list|show` and `attnlab train NAME`: the shipped configs by name, from any
working directory; a wrong name is one sentence with the closest one."""

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from attnlab import configs
from attnlab.captioning import RunConfig as CaptionRunConfig
from attnlab.cli import main
from attnlab.lm import LMRunConfig
from attnlab.translation import RunConfig as TranslationRunConfig


def test_list_names_every_config_and_suite_with_its_first_line(capsys):
    assert main(["config", "list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("Experiment configs") and "Comparison suites" in out
    for name in configs.config_names():
        (line,) = [line for line in lines if line.split()[:1] == [name]]
        assert line.endswith(configs.summary(configs.config_path(name)))
    for name in configs.suite_names():
        assert any(line.split()[:1] == [name] and line.endswith(
            configs.summary(configs.suite_path(name))) for line in lines)


@pytest.mark.parametrize("name, path", [
    ("multi30k-bahdanau", configs.FOLDER / "multi30k-bahdanau.yaml"),
    ("shapes-hard.yaml", configs.FOLDER / "shapes-hard.yaml"),
    ("mechanisms", configs.SUITE_FOLDER / "mechanisms.yaml"),
])
def test_show_prints_the_yaml_with_its_comments(name, path, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["config", "show", name]) == 0
    out = capsys.readouterr().out
    assert out == path.read_text(encoding="utf-8") and out.startswith("# ")
    assert yaml.safe_load(out) == yaml.safe_load(path.read_text(encoding="utf-8"))


def test_show_an_unknown_name_is_one_sentence_with_the_closest(capsys):
    assert main(["config", "show", "multi30k-bahdanu"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert "no shipped config or suite named 'multi30k-bahdanu'; did you mean " \
           "'multi30k-bahdanau'?" in captured.err


@pytest.mark.parametrize("command, name, config_type", [
    (["train"], "dates-bahdanau", TranslationRunConfig),
    (["train"], "lm-multi30k-lstmn", LMRunConfig),
    (["train"], "shapes-soft.yaml", CaptionRunConfig),
])
def test_train_takes_a_shipped_configs_name(command, name, config_type, tmp_path, monkeypatch,
                                            capsys):
    started = []

    def run_experiment(task_class, config, run_dir, **options):
        started.append((config, run_dir))
        return SimpleNamespace(steps=0, stopped_by="test")

    monkeypatch.setattr("attnlab.train.run_experiment", run_experiment)
    monkeypatch.chdir(tmp_path)   # no such file here: the shipped config is meant
    assert main([*command, name, "--set", "train.lr=0.5", "--quiet"]) == 0
    ((config, run_dir),) = started
    assert isinstance(config, config_type) and config.train.lr == 0.5
    assert run_dir == str(Path("runs") / Path(name).stem)


def test_train_an_unknown_name_says_what_it_looked_for(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "dates-bahdanua", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no config file dates-bahdanua here and no shipped config named 'dates-bahdanua'; " \
           "did you mean 'dates-bahdanau'?" in err
    assert not (tmp_path / "runs").exists()
