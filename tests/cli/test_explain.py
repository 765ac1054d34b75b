"""`attnlab explain` and `run.explain`: attention beside the three attributions of one output,
as a figure, a table and JSON."""

import json

import numpy as np
import pytest

import attnlab
from attnlab.cli import main

PNG = b"\x89PNG\r\n\x1a\n"


def test_explain_prints_json_of_every_view_and_draws_them(dates_run, tmp_path, capsys):
    figure = tmp_path / "explain.png"
    assert main(["explain", "--run", str(dates_run), "5 mars 2003", "--format", "json",
                 "--steps", "4", "--output", str(figure)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert set(found["views"]) == {"attention", "gradient", "integrated_gradients", "erasure"}
    rows, cols = len(found["target_pieces"]), len(found["source_pieces"])
    assert found["source_pieces"][-1] == found["target_pieces"][-1] == "</s>"
    for values in found["views"].values():
        assert np.asarray(values).shape == (rows, cols)
    assert np.allclose(np.asarray(found["views"]["attention"]).sum(1), 1.0)
    assert found["integrated_gradients_steps"] == 4
    assert figure.read_bytes().startswith(PNG)


def test_explain_text_names_each_output_pieces_links(dates_run, tmp_path, capsys):
    assert main(["explain", "--run", str(dates_run), "5 mars 2003", "--method", "erasure",
                 "--output", str(tmp_path / "x.png")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("5 mars 2003 -> ")
    assert out[1].split() == ["output", "piece", "attention", "erasure"]
    assert out[-1] == f"figure: {tmp_path / 'x.png'}"


def test_a_forced_target_is_explained_as_given(dates_run):
    run = attnlab.load(dates_run)
    found = run.explain("5 mars 2003", "2003-03-05", methods=["gradient"])
    assert found.text == "2003-03-05"
    assert found.target_pieces == [*"2003-03-05", "</s>"]
    assert found.views["gradient"].shape == (11, len("5 mars 2003") + 1)
    assert len(found.log_probs) == 11 and all(p <= 0 for p in found.log_probs)


def test_the_figure_goes_to_the_current_folder_never_into_the_run(dates_run, tmp_path,
                                                                  capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = sorted(path.name for path in dates_run.rglob("*"))
    assert main(["explain", "--run", str(dates_run), "1 mars 2011", "--method", "erasure"]) == 0
    out = capsys.readouterr()
    assert (tmp_path / "explain.png").read_bytes().startswith(PNG)
    assert sorted(path.name for path in dates_run.rglob("*")) == before
    assert "explaining with erasure" in out.err and "explained in" in out.err
    # each source piece with its position (1-based), so the two 1s of "2011" are told apart
    cells = [line.split()[1:] for line in out.out.splitlines()[2:-1]]
    positions = [int(cell[1:]) for row in cells for cell in row[::2]]
    assert cells and all(1 <= position <= len("1 mars 2011") + 1 for position in positions)


def test_input_explains_every_line_as_json_lines(dates_run, tmp_path, capsys):
    lines = tmp_path / "in.txt"
    lines.write_text("5 mars 2003\n\n12 juillet 1999\n", encoding="utf-8")
    assert main(["explain", "--run", str(dates_run), "--input", str(lines),
                 "--method", "erasure"]) == 1          # one line refused
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [record.get("source") for record in records] == ["5 mars 2003", None,
                                                             "12 juillet 1999"]
    assert records[1] == {"line": 2, "error": "explain needs a sentence: the text is empty"}


def test_the_python_api_checks_its_arguments_as_the_command_line_does(dates_run):
    from attnlab.errors import UserError

    run = attnlab.load(dates_run)
    with pytest.raises(UserError, match="explain takes one sentence \\(a str\\), got a list"):
        run.explain(["5 mars 2003"])
    with pytest.raises(UserError, match="cannot write: 'M' \\(piece 1\\)"):
        run.explain("1 mai 2000", "May 1st, 2000")
    with pytest.raises(UserError, match="the sentence has 300 pieces; explain reads at most"):
        run.explain("1" * 300)
    assert set(run.explain("5 mars 2003", methods="erasure").views) == {"attention", "erasure"}
    for steps in (float("nan"), "8", 10**6, 0, True, 2.5):
        with pytest.raises(UserError, match="steps .* must be a whole number from 1 to 1024"):
            run.explain("5 mars 2003", steps=steps)


@pytest.mark.parametrize(("args", "message"), [
    (["--method", "saliency"], "--method: invalid choice 'saliency'"),
    (["--steps", "0"], "--steps: must be from 1 to 1024"),
    (["--output", "x.svg"], "the explanation figure is a .png file"),
])
def test_bad_options_are_one_sentence(dates_run, tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    try:
        code = main(["explain", "--run", str(dates_run), "5 mars 2003", *args])
    except SystemExit as exit:
        code = exit.code
    assert code != 0
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing written


def dates_gold(dates_data, pairs=30):
    from attnlab.translation.alignment.golds import gold_from_file

    sources = (dates_data / "test.src").read_text(encoding="utf-8").splitlines()[:pairs]
    targets = (dates_data / "test.tgt").read_text(encoding="utf-8").splitlines()[:pairs]
    return gold_from_file(dates_data / "test.align", sources, targets, first_lines=True)


def test_every_extraction_is_scored_and_attentions_agrees_with_its_aer(dates_run, dates_data):
    from attnlab.translation.alignment.extractions import extraction_scores
    from attnlab.translation.alignment.from_attention import score_alignments

    run, gold = attnlab.load(dates_run), dates_gold(dates_data)
    scores = extraction_scores(run, gold, steps=4)
    attention_readings = {"attention", "attention >= 0.3", "attention, row t-1",
                          "attention, row t+1", "attention x value norm", "diagonal"}
    assert set(scores.counts) == {*attention_readings, "gradient", "integrated_gradients",
                                  "erasure"}
    assert scores.pairs == 30 and scores.skipped == 0 and scores.unit == "characters"
    attention = score_alignments(run, gold)        # the AER evaluate and compare report
    assert scores.counts["attention"] == attention.counts
    assert scores.counts["diagonal"] == attention.diagonal_counts
    assert all(0 <= scores.aer(name) <= 1 for name in scores.counts)
    cheap = extraction_scores(run, gold, methods=["gradient"], limit=5)   # a suite's methods
    assert set(cheap.counts) == {*attention_readings, "gradient"}
    assert cheap.counts["gradient"] == scores.counts["gradient"][:5]


def test_the_faithfulness_summary_counts_every_step(dates_run, dates_data):
    from attnlab.explain.intervene import attention_layer
    from attnlab.translation.faithfulness import faithfulness, uniform_translations

    run = attnlab.load(dates_run)
    sources = dates_gold(dates_data, 5).sources
    summary = faithfulness(run, sources, limit=5, adversarial=2)
    own = run.translate(sources, beam=1)
    assert summary.sentences == 5
    assert sum(summary.steps) == sum(len([i for i in r.tokens if i != 3]) + 1 for r in own)
    assert all(0 <= rate <= 1 for rate in summary.rates().values())
    assert all(len(found) == 5 for found in summary.flips.values())
    assert all(0 <= f <= n for found in summary.flips.values()
               for f, n in zip(found, summary.steps, strict=True))
    assert len(summary.permutation_tvd) == 5 and len(summary.adversarial_jsd) == 2
    assert set(summary.agreement) <= {"gradient", "integrated_gradients", "erasure"}
    assert all(len(taus) == 5 for taus in summary.agreement.values())   # None where none
    only = faithfulness(run, sources, limit=2, adversarial=0, methods=["erasure"])
    assert set(only.agreement) == {"gradient", "erasure"}   # gradient's always: erasure needs it
    flat = uniform_translations(run, sources, beam=1)
    assert len(flat) == 5
    assert attention_layer(run.model).intervention is None     # restored afterwards
    assert [r.text for r in run.translate(sources, beam=1)] == [r.text for r in own]


def test_an_int8_model_is_explained_by_erasure_and_refuses_gradients_in_one_sentence(dates_run):
    from attnlab.errors import UserError

    run = attnlab.load(dates_run).quantized("int8")
    with pytest.raises(UserError, match="gradient needs gradients, and this model runs in int8"):
        run.explain("5 mars 2003")
    found = run.explain("5 mars 2003", methods=["erasure"])
    assert set(found.views) == {"attention", "erasure"}


def test_a_reverse_model_adds_its_links_and_both_directions_joined(dates_run, dates_reverse_run,
                                                                    dates_data):
    from attnlab.explain.methods import JOINED, REVERSE
    from attnlab.translation.alignment.extractions import extraction_scores
    from attnlab.translation.alignment.from_attention import score_alignments
    from attnlab.translation.alignment.golds import dates_gold as gold_for_run
    from attnlab.translation.explanation_scores import reverse_model

    run, gold = attnlab.load(dates_run), dates_gold(dates_data)
    backward = reverse_model(run, dates_reverse_run)
    scores = extraction_scores(run, gold, methods=[], reverse=backward)
    assert set(scores.counts) == {"attention", "attention >= 0.3", "attention, row t-1",
                                  "attention, row t+1", "attention x value norm", "diagonal",
                                  REVERSE, *JOINED}
    assert scores.pairs == 30 and scores.skipped == 0
    # The reverse model's links, turned round, score on the forward gold exactly as its own
    # attention does on the gold turned round (the dates gold a run reading `.tgt` gets).
    turned = gold_for_run(backward, dates_data / "test.tgt", gold.targets, gold.sources,
                          first_lines=True)
    assert [a.sure for a in turned.alignments] == [
        frozenset((j, i) for i, j in a.sure) for a in gold.alignments]
    assert scores.counts[REVERSE] == score_alignments(backward, turned).counts
    # The intersection keeps only links both directions found: never more than either.
    both = np.asarray(scores.counts["attention, both directions intersected"])
    for one in ("attention", REVERSE):
        assert (both[:, 2] <= np.asarray(scores.counts[one])[:, 2]).all()
    grown = np.asarray(scores.counts["attention, both directions grow-diag-final"])
    assert (grown[:, 2] >= both[:, 2]).all()


def test_a_run_of_the_same_direction_is_refused_as_the_reverse_in_one_sentence(dates_run):
    from attnlab.errors import ConfigError
    from attnlab.translation.explanation_scores import reverse_model

    with pytest.raises(ConfigError, match=r"translates src-tgt, not the reverse of src-tgt"):
        reverse_model(attnlab.load(dates_run), dates_run)


def test_a_view_is_asked_for_by_its_key_or_its_figures_name(dates_run, tmp_path):
    from attnlab.errors import UserError

    found = attnlab.load(dates_run).explain("5 mars 2003", methods=["gradient"])
    assert found.links("gradient x input") == found.links("gradient")
    with pytest.raises(UserError, match="no view 'gradients'.*did you mean 'gradient'"):
        found.links("gradients")
    with pytest.raises(OSError, match="its folder .*missing does not exist"):
        found.save_html(tmp_path / "missing" / "view.html")
    assert not list(tmp_path.iterdir())      # no hidden temporary file left behind
