"""Every value of a suite file is checked as it loads: each key of a claim (its kind, members,
metric, margin) with did-you-mean, every whole number within its range, every text a text; one
sentence naming the file and the key, before anything trains."""

import math

import pytest
import yaml

from attnlab.cli import main
from attnlab.compare import load_suite
from attnlab.compare.stats.claims import RELATIONS
from attnlab.compare.suite.definition import EXPLAIN_KEYS, EXPLAIN_RANGES
from attnlab.errors import ConfigError
from attnlab.recipes import RECIPES

# a shipped config of each task, for a two-member suite of it
CONFIGS = {"translation": "dates-bahdanau", "captioning": "shapes-soft", "lm": "lm-multi30k-lstm"}


def suite_path(tmp_path, of="translation", **changes):
    """A suite of two members of task `of` with `changes`."""
    suite = {"name": "s", "task": of,
             "members": [{"name": "bahdanau", "config": CONFIGS[of]},
                         {"name": "plain", "config": CONFIGS[of]}]}
    suite.update(changes)
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def refused(path) -> str:
    with pytest.raises(ConfigError) as error:
        load_suite(str(path))
    message = str(error.value)
    assert message.startswith(f"{path}: ") and "\n" not in message, message
    return message


def claim(**entry):
    return {"better": "bahdanau", "than": "plain", "metric": "bleu", **entry}


@pytest.mark.parametrize("entry, says", [
    (claim(metric="blue"), "expect 1: metric 'blue' is none that translation runs are scored "
                           "on (bleu, chrf, exact_match, bleu_drop, aer); did you mean 'bleu'?"),
    (claim(metric=["bleu"]), "expect 1: metric ['bleu'] is none that translation runs"),
    (claim(metric=None), "expect 1: metric None is none that translation runs"),
    (claim(than="bahdanu"), "expect 1: than: no member 'bahdanu' (members: bahdanau, "
                            "diagonal, plain); did you mean 'bahdanau'?"),
    (claim(better=["bahdanau"]), "expect 1: better: no member ['bahdanau']"),
    (claim(than=3), "expect 1: than: no member 3"),
    ({"beter": "bahdanau", "than": "plain", "metric": "bleu"},
     "expect 1: no kind of claim (better, matches, no_worse) in {'beter': 'bahdanau', "),
    ({"beter": "bahdanau", "than": "plain", "metric": "bleu"}, "}; did you mean 'better'?"),
    ({**claim(), "matches": "plain"}, "expect 1: a claim is of one kind, and this one names "
                                      "better and matches"),
    ({"better": "bahdanau", "as": "plain", "metric": "bleu"},
     "expect 1: a better claim names B with 'than', not 'as'"),
    ({"better": "bahdanau", "than": "plain"}, "expect 1: a better claim needs 'metric'"),
    ({"better": "bahdanau", "metric": "bleu"}, "expect 1: a better claim needs 'than'"),
    ({**claim(), "metrik": "bleu"}, "expect 1: a better claim has no key 'metrik'; did you mean "
                                    "'metric'?"),
    (claim(margin=1.0), "expect 1: a better claim takes no margin"),
    ({"no_worse": "bahdanau", "than": "plain", "metric": "bleu"},
     "expect 1: a no_worse claim needs a margin"),
    ({"matches": "bahdanau", "as": "plain", "metric": "bleu", "margin": math.nan},
     "expect 1: margin is a positive number"),
    ({"matches": "bahdanau", "as": "plain", "metric": "bleu", "margin": "1"},
     "expect 1: margin is a positive number"),
    ({"matches": "bahdanau", "as": "plain", "metric": "bleu", "margin": True},
     "expect 1: margin is a positive number"),
    (claim(than="diagonal"), "expect 1: the diagonal aligner can only be the B side of an aer "
                             "claim"),
    ("better bahdanau than plain", "expect 1: give {better: A, than: B, metric: M}"),
])
def test_every_key_of_a_claim_is_checked_as_the_suite_loads(tmp_path, entry, says):
    assert says in refused(suite_path(tmp_path, expect=[entry]))


@pytest.mark.parametrize("task", sorted(RECIPES))
def test_a_claim_may_name_exactly_the_metrics_its_tasks_records_hold(tmp_path, task):
    metrics = RECIPES[task].comparison.metrics()
    # the report's tables test the columns pair by pair: a claim may name each of them
    assert {key for _, key, _ in RECIPES[task].comparison.columns} <= set(metrics)
    kind = next(iter(RELATIONS))
    other = RELATIONS[kind].other
    entries = [{kind: "bahdanau", other: "plain", "metric": metric} for metric in metrics]
    if RELATIONS[kind].margin == "required":
        entries = [{**entry, "margin": 1.0} for entry in entries]
    loaded = load_suite(str(suite_path(tmp_path, task, expect=entries)))
    assert [found.metric for found in loaded.expect] == list(metrics)
    typo = metrics[0][0] + metrics[0]      # 'bbleu1
    message = refused(suite_path(tmp_path, task, expect=[{**entries[0], "metric": typo}]))
    assert f"metric {typo!r} is none that {task} runs are scored on" in message
    assert f"did you mean {metrics[0]!r}?" in message


def test_metric_blue_is_refused_before_anything_trains(tmp_path, capsys):
    path = suite_path(tmp_path, expect=[claim(metric="blue")])
    assert main(["compare", str(path), "--dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "metric 'blue'" in err and "did you mean 'bleu'?" in err
    assert not (tmp_path / "out").exists()


def numbers():
    """(key path, a value below its range, a value above it, the range's words) for every whole
    number a suite holds."""
    yield ["seeds"], 0, 101, "seeds must be a whole number from 1 to 100"
    yield ["budget", "updates"], 0, 10**7 + 1, "budget: updates must be a whole number from 1 to"
    yield (["budget", "converge", "patience"], -1, 1001,
           "budget: patience must be a whole number from 1 to 1,000")
    yield (["budget", "converge", "max_updates"], 0, 10**8,
           "budget: max_updates must be a whole number from 1 to 10,000,000")
    yield ["evaluate", "beam"], 0, 1001, "evaluate: beam must be a whole number from 1 to 1,000"
    yield ["evaluate", "limit"], 0, None, "evaluate: limit must be a positive whole number"
    for key, most in EXPLAIN_RANGES.items():
        yield ["explain", key], 0, most + 1, f"explain: {key} must be a whole number from 1 to"


def with_value(keys, value):
    if keys[:2] == ["budget", "converge"]:
        return {"budget": {"converge": {"patience": 3, "max_updates": 900, keys[2]: value}}}
    changes = value
    for key in reversed(keys):
        changes = {key: changes}
    return changes


def test_every_explain_key_but_methods_has_a_range():
    assert set(EXPLAIN_RANGES) == EXPLAIN_KEYS - {"methods"}


@pytest.mark.parametrize("keys, low, high, says", list(numbers()),
                         ids=lambda value: ".".join(value) if isinstance(value, list) else None)
def test_every_whole_number_of_a_suite_is_bounded_naming_its_key_and_range(tmp_path, keys, low,
                                                                           high, says):
    for value in (low, 2.5, "3", True, math.inf, *([] if high is None else [high])):
        message = refused(suite_path(tmp_path, **with_value(keys, value)))
        assert says in message and message.endswith(f"got {value!r}"), message


def test_steps_100000_names_the_key_not_a_batch_size(tmp_path, capsys):
    path = suite_path(tmp_path, explain={"steps": 100000})
    assert main(["compare", str(path), "--dir", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (f"attnlab: error: {path}: explain: steps must be a whole "
                                       f"number from 1 to 1,024, got 100000\n")


@pytest.mark.parametrize("edges", [[10], [0, 10, 10], [0, 20, 10], [-5, 10], [0, math.inf, 50],
                                   "0 10 20", [0, "10"], [0, math.nan]])
def test_length_edges_rise_from_zero(tmp_path, edges):
    assert "evaluate: length_edges must" in refused(
        suite_path(tmp_path, evaluate={"length_edges": edges}))


@pytest.mark.parametrize("changes, says", [
    ({"task": ["translation"]}, "task must be one of translation, captioning, lm, got "
                                "['translation']"),
    ({"task": "translatoin"}, "did you mean 'translation'?"),
    ({"title": ["a", "b"]}, "title must be a string, got ['a', 'b']"),
    ({"data": 3}, "data must be a string, got 3"),
    ({"set": ["train.lr=1"]}, "set must be a mapping of dotted keys to values"),
    ({"members": [{"name": ["a"], "config": "dates-bahdanau"}]},
     "member 1: name ['a'] must be a unique plain folder name"),
    ({"members": [{"name": "a", "config": ["dates-bahdanau"]}]},
     "member 1 (a): config must be a string"),
    ({"members": [{"name": "a", "config": "dates-bahdanau", "set": "x"}]},
     "member 1 (a): set must be a mapping"),
    ({"members": [{"name": "a", "config": "dates-bahdanau", "label": 5}]},
     "member 1 (a): label must be a string, got 5"),
    ({"members": [{"name": "a", "config": "dates-bahdanau"},
                  {"name": "b", "config": "dates-bahdanau", "minutes_of": ["a"]}]},
     "member 2 (b): minutes_of must name an earlier member, got ['a']"),
    ({"members": [{"name": "first", "config": "dates-bahdanau"},
                  {"name": "b", "config": "dates-bahdanau", "reverse_of": "frist"}]},
     "reverse_of must name an earlier member, got 'frist'; did you mean 'first'?"),
    ({"explain": {"methods": ["gradiant"]}}, "did you mean 'gradient'?"),
    ({"explain": {"methods": [["gradient"]]}}, "explain: methods is a list of"),
])
def test_every_other_suite_key_is_of_its_type(tmp_path, changes, says):
    assert says in refused(suite_path(tmp_path, **changes))
