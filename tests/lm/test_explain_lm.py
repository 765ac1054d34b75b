"""`attnlab compare SUITE --explain` on a language-model suite: each LSTMN run's record of its
self-attention's faithfulness (the LSTM's says it has none), the report's two claims across
seeds and its figures; the claims' tests on hand-made records whose truth is known."""

import json
import math
import random

import numpy as np
import pytest
import yaml

from attnlab.cli import main
from attnlab.compare.report.explanations import (
    PAGES,
    SELF_CLAIMS,
    claim_outcome,
    self_attention_rows,
)
from attnlab.compare.stats.explanations import EXPLANATION_CLAIMS, Explained, claim_tests
from attnlab.configs import config_path
from attnlab.lm.explanation_scores import VERSION

NOUNS = "cat dog man woman child bird".split()
VERBS = "sees chases likes feeds".split()
TINY = {"data.train": "train.txt", "data.valid": "valid.txt", "data.test": "test.txt",
        "data.vocab": "word", "data.vocab_size": None, "data.batch_size": 16,
        "model.embedding_dim": 8, "model.hidden_dim": 8, "model.dropout": 0.0,
        "train.validate_every": 5, "train.checkpoint_every": 5, "train.log_every": 5,
        "train.tensorboard": False, "train.threads": 1, "train.device": "cpu"}
EXPLAIN = {"sentences": 3, "seeds": 3}   # three: fewer decide nothing


def sentence(rng):
    return (f"the {rng.choice(['big', 'small', 'old'])} {rng.choice(NOUNS)} "
            f"{rng.choice(VERBS)} the {rng.choice(NOUNS)} .")


@pytest.fixture
def text_dir(tmp_path):
    rng = random.Random(0)
    for name, count in (("train.txt", 120), ("valid.txt", 10), ("test.txt", 8)):
        (tmp_path / name).write_text("\n".join(sentence(rng) for _ in range(count)) + "\n")
    return tmp_path


def lm_suite(tmp_path, text_dir):
    suite = {"name": "tiny-lm", "task": "lm", "title": "tiny LSTMN suite",
             "claim": "self-attention helps", "data": str(text_dir),
             "example": "the cat sees the dog .", "seeds": 3, "budget": {"updates": 10},
             "set": TINY, "explain": EXPLAIN,
             "members": [{"name": "lstmn", "label": "LSTMN",
                          "config": str(config_path("lm-multi30k-lstmn")),
                          "set": {"model.attention_dim": 8}},
                         {"name": "lstm", "label": "LSTM",
                          "config": str(config_path("lm-multi30k-lstm"))}]}
    path = tmp_path / "tiny-lm.yaml"
    path.write_text(yaml.safe_dump(suite))
    return str(path)


@pytest.mark.slow
def test_explain_gives_each_lstmn_run_a_record_and_the_report_its_claims(
        tmp_path, text_dir, capsys):
    out = tmp_path / "out"
    suite = lm_suite(tmp_path, text_dir)
    assert main(["compare", suite, "--dir", str(out), "--quiet"]) == 0
    assert main(["compare", suite, "--dir", str(out), "--explain", "--quiet"]) == 0
    said = capsys.readouterr().out
    assert "lstmn seed 2: explained in" in said and "lstm seed 1: explained in" in said
    plain = json.loads((out / "lstm" / "seed-1" / "explain.json").read_text())
    assert plain["attention"] is False                 # nothing to explain, and it says so
    record = json.loads((out / "lstmn" / "seed-1" / "explain.json").read_text())
    assert record["asked"] == {"sentences": 3, "version": VERSION} and record["task"] == "lm"
    assert VERSION >= 2                                # the records before the controls: 1
    faith = record["faithfulness"]
    # <s> and 7 words: 8 steps, the first two not tested
    assert len(faith["steps"]) == 3 and all(steps == 6 for steps in faith["steps"])
    assert all(len(flips) == 3 for flips in faith["flips"].values())
    assert len(faith["agreement"]["gradient"]) == len(faith["permutation_tvd"]) == 3
    assert len(faith["comprehensiveness"]["attention"]) == len(faith["sufficiency"]["random"]) == 3
    assert set(faith["randomisation"]) == {"attention", "gradient"}
    own, flat = record["perplexity"]["own"], record["perplexity"]["uniform"]
    assert len(own) == len(flat) == 8 and all(tokens == 8 for _, tokens in own)
    scored = json.loads((out / "lstmn" / "seed-1" / "compare.json").read_text())
    perplexity = math.exp(sum(nll for nll, _ in own) / sum(tokens for _, tokens in own))
    assert perplexity == pytest.approx(scored["scores"]["perplexity"], rel=1e-5)

    markdown = (out / "results.md").read_text()
    section = markdown[markdown.index("#### Is self-attention an explanation?"):]
    for claim in SELF_CLAIMS:
        assert f"- LSTMN: {EXPLANATION_CLAIMS[claim].text}: " in section
    assert "- LSTM: " not in section and "AER" not in section.replace("no AER", "")
    assert "uniform minus own" in section and "95% CI" in section
    assert "ERASER: comprehensiveness and sufficiency against a random ranking" in section
    assert "Is self-attention an explanation?" in (out / "report.html").read_text()


# Hand-made records: n sentences per seed, with the truth set by construction.
N = 80


def record(seed, *, top_flips, random_flips, tau, uniform_cost):
    """One seed's record: per sentence 10 steps of which top_flips / random_flips flipped (the
    second most attended as the random one); tau per sentence; ERASER's figures per sentence,
    attention's comprehensiveness top_flips and sufficiency random_flips, a random ranking's
    the other way round; per sentence nll of 10 tokens, uniform attention `uniform_cost`
    nats more."""
    rng = np.random.default_rng(seed)
    nll = 30.0 + rng.standard_normal(N)

    def figures(mean):
        return [None, *(mean + 0.1 * rng.standard_normal(N - 1))]

    return {"attention": True, "task": "lm", "settings": {"sentences": N},
            "faithfulness": {"steps": [10] * N, "flips": {
                "top_attention": [int(f) for f in rng.binomial(10, top_flips, N)],
                "random": [int(f) for f in rng.binomial(10, random_flips, N)],
                "top_gradient": [int(f) for f in rng.binomial(10, top_flips, N)],
                "second_attention": [int(f) for f in rng.binomial(10, random_flips, N)]},
                "comprehensiveness": {"attention": figures(top_flips),
                                      "random": figures(random_flips)},
                "sufficiency": {"attention": figures(random_flips),
                                "random": figures(top_flips)},
                "agreement": {"gradient": [None, *(tau + 0.2 * rng.standard_normal(N - 1))]},
                "permutation_tvd": [None, *([0.25] * (N - 1))]},
            "perplexity": {"own": [[x, 10.0] for x in nll],
                           "uniform": [[x + uniform_cost, 10.0] for x in nll],
                           "text": "test.txt"}}


def member(name, seeds=3, **truth):
    return Explained(name, name.title(), [record(s, **truth) for s in range(1, seeds + 1)],
                     [{} for _ in range(seeds)])


def test_each_claim_is_found_where_true_refuted_where_false_and_undecided_on_one_seed():
    faithful = member("faithful", top_flips=0.5, random_flips=0.05, tau=0.4, uniform_cost=5.0)
    contrary = member("contrary", top_flips=0.1, random_flips=0.1, tau=-0.4, uniform_cost=0.0)
    lonely = member("lonely", seeds=1, top_flips=0.5, random_flips=0.05, tau=0.4,
                    uniform_cost=5.0)
    claim_tests([faithful, contrary, lonely], SELF_CLAIMS)
    every = len(SELF_CLAIMS)
    assert [claim_outcome(faithful.tests[c]) for c in SELF_CLAIMS] == ["reproduced"] * every
    assert [claim_outcome(contrary.tests[c]) for c in SELF_CLAIMS] == [
        "not reproduced", *["inconclusive"] * (every - 1)]
    assert [claim_outcome(lonely.tests[c]) for c in SELF_CLAIMS] == ["inconclusive"] * every
    assert all(t.p_adjusted is not None for t in faithful.tests.values())   # Holm-adjusted

    rows = self_attention_rows([faithful, lonely])
    header, row, one = rows
    assert header[-1] == "uniform minus own" and row[1] == "3"
    top, _, _ = (float(cell.split()[0]) for cell in row[2:5])
    assert 45 < top < 55 and "95% CI" in row[2]
    # 5 nats more over 10 tokens: exp(3.5) - exp(3.0) more perplexity, whatever the sentence
    assert float(row[-1].split()[0]) == pytest.approx(math.exp(3.5) - math.exp(3.0), rel=0.02)
    assert one[-1].endswith("(< 3 seeds)")
    assert row[header.index("permutation TVD")].startswith("0.250 (95% CI 0.250 to 0.250)")
    lines = PAGES["itself"].markdown([faithful], None, "attnlab compare x --dir y")
    assert lines[1] == "#### Is self-attention an explanation?"
    assert not any("AER of every way" in line for line in lines)


def test_explain_refuses_a_suite_whose_runs_have_no_explanation_record(tmp_path, capsys):
    assert main(["compare", "captioning", "--dir", str(tmp_path / "out"), "--explain"]) != 0
    said = capsys.readouterr().err
    assert "is a captioning suite, and only translation and language-model runs" in said
    assert not (tmp_path / "out").exists()
