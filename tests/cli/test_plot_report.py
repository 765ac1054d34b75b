"""`attnlab plot` (UTF-8 labels: umlauts, CJK) and `attnlab report` (self-contained HTML)."""

import re
import warnings

import pytest

from attnlab.cli import main
from attnlab.data import load_vocab
from attnlab.viz import find_cjk_family

PNG = b"\x89PNG\r\n\x1a\n"
CHINESE_DATE = "2024年3月5日 星期二"


def run_cli(capsys, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main([*map(str, args)]) == 0
    glyphs = [w for w in caught if "font has glyphs" in str(w.message)]
    return capsys.readouterr().out, glyphs


def test_plot_german_sentence_with_umlauts(deen_run, tmp_path, capsys):
    path = tmp_path / "de.png"
    out, glyphs = run_cli(capsys, "plot", "--run", deen_run, "Zwei Männer spielen Fußball.",
                          "--output", path, "--beam", 1)
    assert path.read_bytes().startswith(PNG) and not glyphs
    assert out.startswith("Zwei Männer spielen Fußball. -> ")


def test_plot_chinese_date(dates_run, tmp_path, capsys):
    vocab = load_vocab(dates_run, "src_vocab")
    assert set(CHINESE_DATE) <= set(vocab.pieces)  # the run has read all these characters
    for level in ("--pieces", "--words"):
        path = tmp_path / f"zh{level}.png"
        _, glyphs = run_cli(capsys, "plot", "--run", dates_run, CHINESE_DATE, "--output", path,
                            level)
        assert path.read_bytes().startswith(PNG)
        assert not glyphs or find_cjk_family() is None


def test_plot_from_saved_json_line(dates_run, tmp_path, capsys):
    (tmp_path / "in.txt").write_text(f"5. März 2024\n\n{CHINESE_DATE}\n", encoding="utf-8")
    saved = tmp_path / "links.json"
    run_cli(capsys, "translate", "--run", dates_run, "--input", tmp_path / "in.txt",
            "--alignments", saved, "--format", "json")
    out, _ = run_cli(capsys, "plot", "--json", saved, "--line", 3, "--output", tmp_path / "3.png")
    assert out.startswith(CHINESE_DATE) and (tmp_path / "3.png").read_bytes().startswith(PNG)
    assert main(["plot", "--json", str(saved), "--line", "2", "--output",
                 str(tmp_path / "2.png")]) == 2  # the empty line: nothing to draw
    assert "nothing to draw" in capsys.readouterr().err


@pytest.mark.parametrize("args", [[], ["--run", "R", "--json", "J"], ["--run", "R"],
                                  ["--json", "J", "--output", "x.gif"]])
def test_plot_usage_errors_are_one_line(args, dates_run, tmp_path, capsys):
    saved = tmp_path / "J"
    saved.write_text('{"source_pieces": [], "target_pieces": [], "attention": [], '
                     '"source_words": [], "target_words": [], "word_attention": []}\n')
    args = [str(dates_run) if a == "R" else str(saved) if a == "J" else a for a in args]
    assert main(["plot", *args]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_report_is_self_contained(dates_run, tmp_path, capsys):
    path = tmp_path / "report.html"
    out, _ = run_cli(capsys, "report", "--run", dates_run, "--output", path, "--samples", 2)
    assert str(path) in out
    html = path.read_text(encoding="utf-8")
    links = re.findall(r'(?:src|href)\s*=\s*["\']([^"\']*)', html)
    assert links and all(link.startswith("data:image/png;base64,") for link in links)
    assert "http://" not in html and "https://" not in html
    for section in ("Configuration", "Training curves", "Loss per target token",
                    "exact match", "Scores", "nrefs:1|case:mixed", "BLEU by source length",
                    "Alignment error rate", "dates task gold val.align", "Samples"):
        assert section in html
    assert html.count('<th>reference</th>') == 2  # --samples 2
    assert "val.src / val.tgt" in html  # evaluated on the run's validation split
    assert str(dates_run) not in html and str(dates_run.parent) not in html


def test_report_on_given_pairs_default_output(deen_run, deen_data, capsys):
    run_cli(capsys, "report", "--run", deen_run, "--src", deen_data / "val.de", "--ref",
            deen_data / "val.en", "--no-rwth")
    html = (deen_run / "report.html").read_text(encoding="utf-8")
    assert "Zwei Männer" in html and "Alignment error rate" not in html
    assert "(val.de / " in html and str(deen_data) not in html
