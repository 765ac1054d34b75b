"""`attnlab demo` trains until the validation exact match reaches its target or the time cap
runs out, says which, and exits 1 when it stopped short; the loop's early_stopping.target."""

import dataclasses
import re

import pytest

from attnlab.cli import demo as demo_cli
from attnlab.cli import main
from attnlab.data import write_dates
from attnlab.errors import ConfigError
from attnlab.train import EarlyStoppingConfig, RunDir, TrainConfig, run_experiment
from attnlab.translation import TranslationTask, demo


@pytest.mark.slow
def test_the_demo_stops_when_the_target_is_reached(tmp_path, capsys):
    # Any model reaches 0%: training stops at the first validation.
    assert main(["demo", "--dir", str(tmp_path), "--size", "600", "--target", "0"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^reached the 0% target \(\d+\.\d% exact match on the validation dates\) "
                     rf"after {demo.VALIDATE_EVERY} updates in \d+\.\d minutes$", out, re.M)
    assert RunDir(tmp_path / "run").read_meta("last")["step"] == demo.VALIDATE_EVERY
    assert "exact-match accuracy on 60 held-out examples (" in out
    assert out.splitlines()[-1] == f"alignment heatmap: {tmp_path / 'alignment.png'}"
    assert (tmp_path / "alignment.png").is_file()


@pytest.mark.slow
def test_the_demo_says_when_it_stopped_short_and_exits_1(tmp_path, capsys):
    # Under a second of training (tens of updates) is far from 99% of the dates right.
    assert main(["demo", "--dir", str(tmp_path), "--size", "600", "--minutes", "0.01"]) == 1
    out = capsys.readouterr().out
    last = out.splitlines()[-1]
    assert re.fullmatch(r"reached \d+\.\d% exact match on the validation dates after \d+\.\d "
                        r"minutes \(\d+ updates\), short of the 99% target: the machine is "
                        r"slower or busier than expected; run attnlab demo --minutes 0\.02",
                        last), last
    steps = RunDir(tmp_path / "run").read_meta("last")["step"]
    assert 0 < steps < demo.VALIDATE_EVERY   # stopped by the clock, validated at the end
    # what it has is still shown: translations, the test accuracy and the heatmap
    assert "exact-match accuracy on 60 held-out examples (" in out and "3/3 held-out dates:" in out
    assert (tmp_path / "alignment.png").is_file()


@pytest.mark.slow
def test_an_interrupted_demo_does_not_blame_the_machine(tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):   # Ctrl-C: the loop saves `last` and returns
        return dataclasses.replace(run_experiment(*args, **kwargs), stopped_by="interrupted")

    monkeypatch.setattr(demo, "run_experiment", interrupted)
    assert main(["demo", "--dir", str(tmp_path), "--size", "600", "--minutes", "0.01"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert "short of the 99% target: training was interrupted, so " in last, last
    assert last.endswith("; run attnlab demo again"), last


def test_the_cli_defaults_are_the_demos():
    assert (demo_cli.MINUTES, demo_cli.TARGET, demo_cli.THREADS) \
        == (demo.MINUTES, demo.TARGET, demo.THREADS)


@pytest.mark.parametrize("target", ["-1", "101", "x"])
def test_the_target_is_a_percentage(target, capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--target", target])
    assert "--target" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize(("stopping", "stopped_by", "steps"), [
    (EarlyStoppingConfig("loss", "min", target=1e9), "target", 5),        # reached at once
    (EarlyStoppingConfig("loss", "min", target=-1.0), "max_steps", 10),   # never
    (EarlyStoppingConfig("exact_match", "max", target=101.0), "max_steps", 10),
])
def test_the_loop_stops_at_a_target(tmp_path, stopping, stopped_by, steps):
    write_dates(tmp_path / "data", size=300, seed=1)
    config = demo.demo_config(tmp_path / "data", minutes=5, threads=None)
    config.train = dataclasses.replace(config.train, max_steps=10, validate_every=5,
                                       tensorboard=False, early_stopping=stopping)
    result = run_experiment(TranslationTask, config, tmp_path / "run", progress=False,
                            log=lambda _: None)
    assert (result.stopped_by, result.steps) == (stopped_by, steps)


def test_a_target_needs_a_metric():
    with pytest.raises(ConfigError, match="early_stopping.target needs"):
        TrainConfig(early_stopping=EarlyStoppingConfig(target=1.0))
