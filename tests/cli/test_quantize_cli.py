"""`--quantize int8` on translate and evaluate: same lines out, scores printed, clear refusals."""

import pytest

from attnlab.cli import main
from attnlab.errors import UserError
from attnlab.translation.loading import load_run


def test_translate_int8_keeps_every_line(dates_run, tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_text("5. März 2024\n\nMarch 5, 2024\n", encoding="utf-8")
    assert main(["translate", "--run", str(dates_run), "--input", str(source)]) == 0
    exact = capsys.readouterr().out.split("\n")
    assert main(["translate", "--run", str(dates_run), "--input", str(source),
                 "--quantize", "int8"]) == 0
    approx = capsys.readouterr().out.split("\n")
    assert len(approx) == len(exact) == 4 and approx[1] == "" and approx[0] and approx[2]


def test_evaluate_int8_prints_its_scores(dates_run, capsys):
    assert main(["evaluate", "--run", str(dates_run), "--quantize", "int8", "--beam", "2",
                 "--quiet"]) == 0
    assert "BLEU" in capsys.readouterr().out


def test_unknown_kind_and_non_cpu_model_are_refused(dates_run):
    trained = load_run(dates_run, device="cpu")
    assert trained.quantized(None) is trained
    with pytest.raises(UserError, match="only int8 is available"):
        trained.quantized("int4")
    trained.model.to("meta")  # any device that is not the CPU
    with pytest.raises(UserError, match="runs on the CPU: give --device cpu"):
        trained.quantized("int8")
