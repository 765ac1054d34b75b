"""`attnlab demo` never loses the model trained before (issue 36): every option is checked
before anything is written or removed, the new model takes the old one's place only when its
training ended by itself, and the old one is kept beside it, said in one line."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path

import pytest

import attnlab
from attnlab.cli import main
from attnlab.errors import ConfigError, UserError
from attnlab.translation import demo

TINY = ["--size", "600", "--target", "0"]  # stops at the first validation: 100 updates


def exit_code(argv: list[str]) -> int:
    """main's exit status, whether the parser or the command refused."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder` -> the sha256 of its bytes."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def loads(run: Path) -> bool:
    """Whether the run loads and translates."""
    return isinstance(attnlab.load(run).translate(["3 May 2001"])[0].text, str)


@pytest.fixture(scope="module")
def finished_demo(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("demo") / "demo"
    assert main(["demo", "--dir", str(folder), *TINY]) == 0
    return folder


@pytest.fixture
def demo_dir(finished_demo, tmp_path) -> Path:
    """A copy of the finished demo, for a test to rerun the demo on."""
    folder = tmp_path / "demo"
    shutil.copytree(finished_demo, folder)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize(("option", "value"), [
    ("--minutes", "-1"), ("--minutes", "0"), ("--minutes", "nan"), ("--minutes", "inf"),
    ("--size", "5"), ("--size", "-3"), ("--threads", "0"), ("--target", "101"),
])
def test_a_refused_option_touches_nothing(demo_dir, capsys, option, value):
    before = snapshot(demo_dir)
    assert exit_code(["demo", "--dir", str(demo_dir), option, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert option in err[-1] and "Traceback" not in "\n".join(err)
    assert snapshot(demo_dir) == before
    assert loads(demo_dir / "run")


@pytest.mark.slow
@pytest.mark.parametrize("options", [dict(minutes=-1.0), dict(minutes=float("nan")),
                                     dict(size=5), dict(threads=0),
                                     dict(target=float("nan"))])
def test_run_demo_checks_every_option_first(demo_dir, options):
    """The Python API checks what the command line does, before anything is touched."""
    before = snapshot(demo_dir)
    with pytest.raises(ConfigError, match="^--"):
        demo.run_demo(demo_dir, progress=False, log=lambda _: None, **options)
    assert snapshot(demo_dir) == before


def test_a_dir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="is a file, not a folder"):
        demo.run_demo(tmp_path / "file" / "demo", log=lambda _: None)


@pytest.mark.slow
def test_a_rerun_keeps_the_model_it_replaces_and_says_where(demo_dir, capsys):
    old = snapshot(demo_dir / "run")
    assert main(["demo", "--dir", str(demo_dir), *TINY]) == 0
    out = capsys.readouterr().out
    world = "dates of 1000-2099 (50% of them 1950-2049) and 5% not dates"
    assert f"1/3 generating the dates task (600 examples: {world}) in " in out
    assert (f"the model in {demo_dir / 'run'}: bahdanau / additive, global; trained on "
            f"{world}") in out.splitlines()
    assert (f"the model trained before is kept in {demo_dir / 'run.previous'}; the new one "
            f"replaces it in {demo_dir / 'run'}") in out.splitlines()
    assert snapshot(demo_dir / "run.previous") == old
    assert loads(demo_dir / "run") and loads(demo_dir / "run.previous")
    assert not (demo_dir / "run.new").exists() and not (demo_dir / "data.new").exists()


@pytest.mark.slow
def test_an_interrupted_demo_leaves_the_model_where_it_was(demo_dir, capsys, monkeypatch):
    train = demo.run_experiment

    def interrupted(*args, **kwargs):   # Ctrl-C: the loop saves `last` and returns
        return dataclasses.replace(train(*args, **kwargs), stopped_by="interrupted")

    old = snapshot(demo_dir / "run")
    monkeypatch.setattr(demo, "run_experiment", interrupted)
    assert main(["demo", "--dir", str(demo_dir), "--size", "600", "--minutes", "0.01"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.endswith(f"training was interrupted, so {demo_dir / 'run'} is unchanged and the "
                         f"unfinished run is in {demo_dir / 'run.new'}; run attnlab demo again")
    assert snapshot(demo_dir / "run") == old and loads(demo_dir / "run")
    assert not (demo_dir / "run.previous").exists()


@pytest.mark.slow
def test_a_failed_demo_leaves_the_model_where_it_was(demo_dir, monkeypatch):
    def failing(*args, **kwargs):
        raise RuntimeError("the training broke")

    old = snapshot(demo_dir / "run")
    monkeypatch.setattr(demo, "run_experiment", failing)
    with pytest.raises(RuntimeError, match="the training broke"):
        demo.run_demo(demo_dir, size=600, progress=False, log=lambda _: None)
    assert snapshot(demo_dir / "run") == old and loads(demo_dir / "run")


@pytest.mark.slow
def test_the_demo_says_which_dates_it_knows(finished_demo):
    """The printout and the run's description name the range (and the sources that are no
    date); the data folder records it."""
    from attnlab.translation.describe import describe_run, trained_on

    run = attnlab.load(finished_demo / "run")
    world = "dates of 1000-2099 (50% of them 1950-2049) and 5% not dates"
    assert trained_on(run.config) == world
    assert describe_run(run.config) == f"bahdanau / additive, global; trained on {world}"
    assert world in (finished_demo / "data" / "meta.json").read_text(encoding="utf-8")
    # issue 36: the model is taught to answer "not a date" (no links) for sources that are none
    data = finished_demo / "data"
    pairs = zip(*((data / f"train.{kind}").read_text(encoding="utf-8").split("\n")[:-1]
                  for kind in ("src", "tgt", "align")), strict=True)
    not_dates = [(source, links) for source, target, links in pairs if target == "not a date"]
    assert 0.02 * 480 < len(not_dates) < 0.08 * 480  # 14 with seed 1
    assert all(links == "" for _, links in not_dates)


def test_a_run_whose_data_says_nothing_is_described_by_its_model(tmp_path):
    from attnlab.translation.config import DataConfig, RunConfig
    from attnlab.translation.describe import describe_run

    config = RunConfig(data=DataConfig(dir=str(tmp_path / "missing")))
    assert describe_run(config) == "bahdanau / additive, global"
