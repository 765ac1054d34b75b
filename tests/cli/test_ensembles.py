"""Several --run on translate, evaluate and plot (an ensemble), the penalty flags, and --replace-unk
end to end: a run twice is that run, other vocabularies are one sentence, each member's own
attention on request, an <unk> becomes the source word it attends to most."""

import json

import numpy as np
import pytest
import torch

from attnlab.cli import main
from attnlab.data import EOS_ID, UNK_ID
from attnlab.translation import TranslationRun

SOURCES = ["Zwei Männer spielen Fußball .", "Ein Mann spielt Gitarre .", ""]


@pytest.fixture
def input_file(tmp_path):
    path = tmp_path / "input.txt"
    path.write_text("".join(line + "\n" for line in SOURCES), encoding="utf-8")
    return path


def run_command(capsys, *args):
    code = main([*map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_run_given_twice_translates_as_that_run(deen_run, input_file, capsys):
    options = ("--input", input_file, "--nbest", 2, "--format", "json", "--beta", 0.2)
    code, alone, _ = run_command(capsys, "translate", "--run", deen_run, *options)
    assert code == 0
    code, twice, _ = run_command(capsys, "translate", "--run", deen_run, "--run", deen_run,
                                 *options)
    assert code == 0
    for one, two in zip(alone.splitlines(), twice.splitlines(), strict=True):
        one, two = json.loads(one), json.loads(two)
        assert [h["translation"] for h in one["hypotheses"]] == [
            h["translation"] for h in two["hypotheses"]]
        assert [h["score"] for h in one["hypotheses"]] == pytest.approx(
            [h["score"] for h in two["hypotheses"]], abs=1e-5)


def test_other_vocabularies_are_one_sentence_and_nothing_is_written(
        deen_run, dates_run, input_file, tmp_path, capsys):
    output = tmp_path / "out.txt"
    code, out, err = run_command(capsys, "translate", "--run", deen_run, "--run", dates_run,
                                 "--input", input_file, "--output", output)
    assert code == 2 and not out and not output.exists()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{deen_run} and {dates_run} have different source vocabularies" in err
    assert "cannot be ensembled" in err


def test_each_member_attention_is_kept_on_request(deen_run, input_file, tmp_path, capsys):
    links = tmp_path / "links.jsonl"
    code, _, err = run_command(capsys, "translate", "--run", deen_run, "--run", deen_run,
                               "--input", input_file, "--alignments", links, "--format",
                               "json", "--member-attention")
    assert code == 0, err
    records = [json.loads(line) for line in links.read_text(encoding="utf-8").splitlines()]
    for record in records[:2]:
        members = [np.asarray(m) for m in record["member_attention"]]
        assert len(members) == 2
        np.testing.assert_allclose(members[0], members[1], atol=1e-5)
        np.testing.assert_allclose((members[0] + members[1]) / 2, record["attention"],
                                   atol=2e-5)
    code, _, err = run_command(capsys, "translate", "--run", deen_run, "--input", input_file,
                               "--member-attention")
    assert code == 2 and "several --run" in err


def test_evaluate_and_plot_an_ensemble(deen_run, tmp_path, capsys):
    code, out, err = run_command(capsys, "evaluate", "--run", deen_run, "--run", deen_run,
                                 "--no-rwth", "--beta", 0.3, "--length-penalty", "average",
                                 "--timing", "--output", tmp_path / "scores.json")
    assert code == 0, err
    assert f"{deen_run} + {deen_run}" in out and "beam 2, length penalty average, beta 0.3" in out
    assert "decoded 6 sentences in " in err and "sentences/s)" in err
    assert "speed" not in json.loads((tmp_path / "scores.json").read_text())  # reproducible
    figure = tmp_path / "mean.png"
    code, out, err = run_command(capsys, "plot", "--run", deen_run, "--run", deen_run,
                                 "Zwei Männer spielen Fußball .", "--output", figure)
    assert code == 0 and figure.stat().st_size > 0, err


def test_penalty_flags_are_checked_in_one_sentence(deen_run, input_file, capsys):
    with pytest.raises(SystemExit) as exit_:  # refused by the parser, as --beam 0 is
        run_command(capsys, "translate", "--run", deen_run, "--input", input_file, "--beta", -1)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.strip().splitlines()[-1] == (
        "attnlab translate: error: argument --beta: must be from 0 to 10, got '-1'")
    code, _, err = run_command(capsys, "translate", "--run", deen_run, "--input", input_file,
                               "--dictionary", input_file)
    assert code == 2 and "--replace-unk" in err and err.count("\n") == 1


def always_unknown(trained):
    """The run's model made to write <unk> wherever it can."""
    for member in trained.members or [trained]:
        with torch.no_grad():
            member.model.decoder.output.proj.bias[UNK_ID] += 100.0
    return trained


@pytest.mark.parametrize("ensemble", [False, True])
def test_replace_unk_copies_the_most_attended_source_word(deen_run, tmp_path, ensemble):
    trained = always_unknown(TranslationRun.load([deen_run] * (2 if ensemble else 1)))
    (found,) = trained.translate([SOURCES[0]], n_best=2, replace_unk=True)
    words = SOURCES[0].split()
    for hypothesis in found.hypotheses:
        assert "<unk>" not in hypothesis.text
        rows = np.asarray(hypothesis.attention)[:, :-1]  # "</s>" is never copied
        expected = [words[int(np.argmax(rows[j]))] if token == UNK_ID
                    else trained.vocabs.tgt.id_to_piece(token)
                    for j, token in enumerate(hypothesis.tokens) if token != EOS_ID]
        assert UNK_ID in hypothesis.tokens and hypothesis.text.split() == expected
    dictionary = tmp_path / "dictionary.txt"
    dictionary.write_text("".join(f"{word}\t{word.upper()}!\n" for word in words),
                          encoding="utf-8")
    (translated,) = trained.translate([SOURCES[0]], replace_unk=True,
                                      dictionary=dictionary)
    assert translated.text.split() == [word.upper() + "!" for word in found.text.split()]
    (plain,) = trained.translate([SOURCES[0]])
    assert set(plain.text.split()) == {"<unk>"}


def test_attnlab_load_of_several_paths_is_an_ensemble_with_the_same_methods(
        deen_run, dates_run, lm_run):
    import attnlab
    from attnlab.errors import CheckpointError

    single, twins = attnlab.load(deen_run), attnlab.load([deen_run, deen_run])
    assert type(twins) is TranslationRun and len(twins.members) == 2
    assert twins.paths == [deen_run, deen_run] and twins.name == f"{deen_run} + {deen_run}"
    assert single.paths == [deen_run] and single.members == []
    alone = single.translate(SOURCES[:2], n_best=2, beta=0.1, member_attention=True)
    together = twins.translate(SOURCES[:2], n_best=2, beta=0.1, member_attention=True)
    for one, two in zip(alone, together, strict=True):
        assert [h.text for h in one.hypotheses] == [h.text for h in two.hypotheses]
        assert two.score == pytest.approx(one.score, abs=1e-5)
        np.testing.assert_allclose(two.attention, one.attention, atol=1e-6)
        assert len(one.member_attention) == 1 and len(two.member_attention) == 2
        for weights in two.member_attention:
            np.testing.assert_allclose(weights, one.attention, atol=1e-6)
    assert [r.text for r in twins.stream(iter(SOURCES))] == [
        r.text for r in single.stream(iter(SOURCES))]
    streamed = [r for r in single.stream(iter(SOURCES[:2]), member_attention=True)]
    assert all(len(r.member_attention) == 1 for r in streamed)
    streamed = [r for r in twins.stream(iter(SOURCES[:2]), member_attention=True)]
    assert all(len(r.member_attention) == 2 for r in streamed)
    with pytest.raises(CheckpointError, match="different source vocabularies"):
        attnlab.load([deen_run, dates_run])
    with pytest.raises(CheckpointError, match="is a language-model run and .* a translation "
                                              "run: an ensemble is of one task's runs"):
        attnlab.load([deen_run, lm_run])
    with pytest.raises(CheckpointError, match="attnlab.load of several paths makes an ensemble "
                                              "of translation runs only"):
        attnlab.load([lm_run, lm_run])
    assert type(attnlab.load([deen_run])) is TranslationRun


def test_an_ensemble_is_scored_for_aer_on_its_mean_attention(dates_run, capsys):
    code, alone, err = run_command(capsys, "evaluate", "--run", dates_run, "--beam", 1,
                                   "--no-rwth")
    assert code == 0, err
    code, twice, err = run_command(capsys, "evaluate", "--run", dates_run, "--run", dates_run,
                                   "--beam", 1, "--no-rwth")
    assert code == 0, err
    aer = [line for line in alone.splitlines() if line.startswith("AER ")]
    assert aer and aer == [line for line in twice.splitlines() if line.startswith("AER ")]
