"""Suite files: the shipped ones load and build every member's config; mistakes in a suite get
one sentence naming the file, the member and the key, before anything trains."""

import json

import pytest
import yaml

from attnlab import configs
from attnlab.cli import main
from attnlab.compare import RunOptions, load_suite, shipped_suites
from attnlab.compare.run.runner import check_suite, member_config
from attnlab.compare.run.timing import training_cost
from attnlab.configs import config_path
from attnlab.errors import ConfigError, UserError

SHIPPED = ("bottleneck", "captioning", "dates", "directions", "lstmn", "mechanisms",
           "news-alignment")


def test_the_four_suites_are_shipped_and_every_member_config_builds(tmp_path):
    assert set(SHIPPED) <= set(shipped_suites())
    for name in SHIPPED:
        suite = load_suite(name)
        steps = set()
        for member in suite.members:
            if member.minutes_of is not None:
                continue
            config = member_config(suite, member, RunOptions(data="somewhere"), tmp_path)
            steps.add(config.train.max_steps)
            assert config.train.seed == 1
        assert len(steps) == 1, f"{name}: members differ in updates {steps}"


def test_the_directions_suite_trains_exactly_the_mechanisms_suites_two_members(tmp_path):
    """Its comment promises that runs copied from one folder into the other are kept: the
    same configs, member by member."""
    directions, mechanisms = load_suite("directions"), load_suite("mechanisms")
    for member in directions.members:
        twin = mechanisms.member(member.name)
        assert member.reverse_of == twin.reverse_of
        for seed in (1, 3):
            options = RunOptions(data="somewhere")
            assert (member_config(directions, member, options, tmp_path, seed)
                    == member_config(mechanisms, twin, options, tmp_path, seed))


def test_scale_multiplies_the_updates_and_minutes_of_takes_the_other_members(tmp_path):
    suite = load_suite("lstmn")
    lstmn, _, equal_time = suite.members
    scaled = member_config(suite, lstmn, RunOptions(scale=4), tmp_path)
    assert scaled.train.max_steps == 4 * member_config(suite, lstmn, RunOptions(),
                                                       tmp_path).train.max_steps
    with pytest.raises(UserError, match="lstmn.*has not finished"):
        member_config(suite, equal_time, RunOptions(), tmp_path)
    (tmp_path / "lstmn" / "seed-1").mkdir(parents=True)
    (tmp_path / "lstmn" / "seed-1" / "compare.json").write_text(json.dumps({"minutes": 12.5}))
    config = member_config(suite, equal_time, RunOptions(), tmp_path)
    assert (config.train.max_minutes, config.train.max_steps) == (12.5, None)


def write_suite(tmp_path, **changes):
    suite = {"name": "s", "task": "translation",
             "members": [{"name": "a", "config": "../configs/dates-bahdanau.yaml"}]}
    suite.update(changes)
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A working directory with configs/dates-bahdanau.yaml one level up from the suite."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "dates-bahdanau.yaml").write_text(
        config_path("dates-bahdanau").read_text())
    suites = tmp_path / "suites"
    suites.mkdir()
    monkeypatch.chdir(tmp_path)
    return suites


@pytest.mark.parametrize("changes, message", [
    ({"tsak": "lm"}, "unknown key 'tsak'; did you mean 'task'?"),
    ({"task": "parsing"}, "task must be one of translation, captioning, lm"),
    ({"members": []}, "members must be a non-empty list"),
    ({"members": [{"name": "a", "config": "nowhere.yaml"}]}, "member 1 (a): config not found"),
    ({"members": [{"name": "a", "config": "../configs/dates-bahdanau.yaml", "sett": {}}]},
     "member 1: unknown key 'sett'; did you mean 'set'?"),
    ({"members": [{"name": "a", "config": "../configs/dates-bahdanau.yaml"},
                  {"name": "a", "config": "../configs/dates-bahdanau.yaml"}]},
     "name 'a' must be a unique plain folder name"),
    ({"members": [{"name": "a", "config": "../configs/dates-bahdanau.yaml",
                   "minutes_of": "b"}]}, "minutes_of must name an earlier member"),
    ({"evaluate": {"beam": 5, "bleam": 3}}, "evaluate: unknown key 'bleam'"),
])
def test_suite_mistakes_are_one_sentence(here, changes, message):
    path = write_suite(here, **changes)
    with pytest.raises(ConfigError) as error:
        load_suite(str(path))
    assert message in str(error.value)
    assert str(path) in str(error.value)


def test_a_users_suite_names_shipped_configs_by_name(here):
    # a file beside the suite comes first; else the shipped config of that name
    path = write_suite(here, members=[{"name": "a", "config": "dates-bahdanau"},
                                      {"name": "b", "config": "multi30k-bahdanau.yaml"},
                                      {"name": "c", "config": "../configs/dates-bahdanau.yaml"}])
    members = load_suite(str(path)).members
    assert [m.config for m in members] == [config_path("dates-bahdanau").resolve(),
                                           config_path("multi30k-bahdanau").resolve(),
                                           (here.parent / "configs" / "dates-bahdanau.yaml")
                                           .resolve()]
    beside = here / "mine"
    beside.mkdir()
    (beside / "dates-bahdanau.yaml").write_text(config_path("dates-bahdanau").read_text())
    path = write_suite(beside, members=[{"name": "a", "config": "dates-bahdanau.yaml"}])
    assert load_suite(str(path)).members[0].config == (beside / "dates-bahdanau.yaml").resolve()


def test_a_bad_override_names_the_suite_and_member_before_training(here, tmp_path):
    path = write_suite(here, set={"train.lrr": 1})
    suite = load_suite(str(path))
    with pytest.raises(ConfigError, match=r"suite.yaml member a: .*train.lrr"):
        check_suite(suite, suite.members, tmp_path / "out", RunOptions())
    assert not (tmp_path / "out").exists()


def test_missing_data_names_the_command_that_makes_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    suite = load_suite("bottleneck")
    with pytest.raises(UserError, match="data/multi30k-long .* attnlab data multi30k-long"):
        check_suite(suite, suite.members, tmp_path / "out", RunOptions())


def test_unknown_suite_and_member_suggest_the_close_name(capsys):
    with pytest.raises(ConfigError, match="did you mean 'mechanisms'"):
        load_suite("mechanism")
    with pytest.raises(ConfigError, match="did you mean 'local-p'"):
        load_suite("mechanisms").member("local_p")


def test_compare_help_explains_suites_only_and_report(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = capsys.readouterr().out
    for word in ("--only", "--report", "--scale", "resumes"):
        assert word in text
    for name in configs.suite_names():   # every shipped suite, each with its summary line
        assert f"- {name}: " in text, name
    assert "news-alignment: Attention as alignment nearer the gold's domain" in text


def test_training_cost_reads_updates_minutes_and_the_validation_curve(tmp_path):
    (tmp_path / "last").mkdir()
    (tmp_path / "last" / "meta.json").write_text(json.dumps({"format_version": 3, "step": 30,
                                                             "elapsed_seconds": 90.0}))
    lines = [{"kind": "train", "step": 10, "loss": 3.0, "ms_per_step": 40.0},
             {"kind": "train", "step": 20, "loss": 2.0, "ms_per_step": 60.0},
             {"kind": "train", "step": 30, "loss": 1.0, "ms_per_step": 50.0},
             {"kind": "valid", "step": 20, "bleu": 5.0, "elapsed_seconds": 60.0},
             {"kind": "valid", "step": 20, "bleu": 6.0, "elapsed_seconds": 66.0},  # resumed
             {"kind": "valid", "step": 30, "bleu": 9.0, "elapsed_seconds": 90.0}]
    (tmp_path / "metrics.jsonl").write_text(
        "\n".join(json.dumps(line) for line in lines) + "\n{cut sho")
    cost = training_cost(tmp_path, "bleu")
    assert (cost.updates, cost.minutes, cost.ms_per_update) == (30, 1.5, 50.0)
    assert cost.curve == [(20.0, 6.0), (30.0, 9.0)]   # (updates, value): the same anywhere
    assert cost.compute_minutes == round(30 * 50.0 / 60_000, 3)
