"""`--quantize int8` on translate and evaluate: each line answered in order, scores printed, clear
refusals."""

import pytest

from attnlab.cli import main
from attnlab.errors import UserError
from attnlab.translation import TranslationRun


def test_translate_int8_answers_every_line_in_order(dates_run, tmp_path, capsys):
    lines = ["5. März 2024", "", "March 5, 2024", "2024-03-05", "le 3 juin 1987",
             "14 March 1998"]
    source = tmp_path / "in.txt"
    source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert main(["translate", "--run", str(dates_run), "--input", str(source)]) == 0
    exact = capsys.readouterr().out.split("\n")
    assert main(["translate", "--run", str(dates_run), "--input", str(source),
                 "--quantize", "int8"]) == 0
    approx = capsys.readouterr().out.split("\n")
    # int8 rounds the weights and, per batch, the activations, so it may change a translation
    # (against the exact model, or against the same line decoded alone). What is promised: line
    # i out is the translation of line i in, by the model asked for, and an empty line stays
    # empty. So each output is compared with that model's translation of the same lines.
    trained = TranslationRun.load(dates_run, device="cpu")
    assert exact == [result.text for result in trained.translate(lines)] + [""]
    assert approx == [result.text for result in trained.quantized("int8").translate(lines)] + [""]
    assert [bool(line) for line in approx] == [bool(line) for line in lines] + [False]
    # Lines with distinct answers, one of which int8 changes: lines out of order, or the exact
    # model in int8's place, would show.
    assert len(set(approx) - {""}) > 1 and approx != exact


def test_evaluate_int8_prints_its_scores(dates_run, capsys):
    assert main(["evaluate", "--run", str(dates_run), "--quantize", "int8", "--beam", "2",
                 "--quiet"]) == 0
    assert "BLEU" in capsys.readouterr().out


def test_unknown_kind_and_non_cpu_model_are_refused(dates_run):
    trained = TranslationRun.load(dates_run, device="cpu")
    assert trained.quantized(None) is trained
    with pytest.raises(UserError, match="only int8 is available"):
        trained.quantized("int4")
    trained.model.to("meta")  # any device that is not the CPU
    with pytest.raises(UserError, match="runs on the CPU: give --device cpu"):
        trained.quantized("int8")
