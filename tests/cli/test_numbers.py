"""Numbers read from the command line: every option that reads a number refuses NaN and infinity
in one sentence naming it (the parser walked, so a new option is held to it too), the decoding
numbers have stated ranges that keep every score finite, and JSON output stays JSON."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest

from attnlab.cli import build_parser, main
from attnlab.cli.options import ALPHA_MAX, BETA_MAX, MAX_BEAM, number_from, whole_number
from attnlab.cli.translate import json_line

NOT_FINITE = ["nan", "NaN", "inf", "-inf", "infinity", "1e999"]


def number_options(parser: argparse.ArgumentParser, command: tuple[str, ...] = ()):
    """(command words, the option's action) of every option with a type, in every command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from number_options(sub, (*command, name))
        elif action.option_strings and action.type not in (None, str, Path):
            yield command, action


OPTIONS = sorted({(" ".join(command), "/".join(action.option_strings))
                  for command, action in number_options(build_parser())})


def refusal(argv: list[str], capsys) -> str:
    """The error line of a command line the parser refuses (exit 2)."""
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_the_walk_finds_the_number_options():
    found = set(OPTIONS)
    for option in [("translate", "--alpha"), ("translate", "--beta"), ("translate", "--beam"),
                   ("compare", "--scale"), ("demo", "--minutes"), ("average", "--last"),
                   ("serve", "--max-upload-mb"), ("evaluate", "--beta")]:
        assert option in found


@pytest.mark.parametrize(("command", "option"), OPTIONS)
@pytest.mark.parametrize("value", NOT_FINITE)
def test_every_number_option_refuses_nan_and_infinity(command, option, value, capsys):
    flag = option.split("/")[-1]
    line = refusal([*command.split(), flag, value], capsys)
    assert line.startswith(f"attnlab {command}: error: argument {option}: "), line


@pytest.mark.parametrize(("argv", "message"), [
    (["translate", "--alpha", "1e308"], f"argument --alpha: must be from 0 to {ALPHA_MAX:g}, "
                                        "got '1e308'"),
    (["translate", "--beta", "1e308"], f"argument --beta: must be from 0 to {BETA_MAX:g}, "
                                       "got '1e308'"),
    (["translate", "--beta", "-1"], "argument --beta: must be from 0 to"),
    (["evaluate", "--alpha", "-0.5"], "argument --alpha: must be from 0 to"),
    (["translate", "--beam", "0"], f"argument --beam: must be from 1 to {MAX_BEAM}, got '0'"),
    (["translate", "--beam", str(MAX_BEAM + 1)], "argument --beam: must be from 1 to"),
    (["translate", "--nbest", "1e3"], "argument --nbest: expected a whole number, got '1e3'"),
    (["compare", "--scale", "0"], "argument --scale: must be above 0 and at most 1000, got '0'"),
    (["compare", "--scale", "-2"], "argument --scale: must be above 0"),
    (["compare", "--scale", "1e6"], "argument --scale: must be above 0 and at most 1000"),
    (["compare", "--seeds", "0"], "argument --seeds: must be at least 1, got '0'"),
    (["compare", "--jobs", "-1"], "argument --jobs: must be at least 1, got '-1'"),
    (["demo", "--minutes", "-1"], "argument --minutes: must be above 0, got '-1'"),
    (["demo", "--minutes", "fast"], "argument --minutes: expected a number, got 'fast'"),
    (["report", "--samples", "-1"], "argument --samples: must be at least 0, got '-1'"),
    (["serve", "--max-upload-mb", "1e308"], "argument --max-upload-mb: must be at most 1048576"),
])
def test_out_of_range_is_one_sentence_naming_the_option(argv, message, capsys):
    line = refusal(argv, capsys)
    assert message in line and line.count(". ") == 0, line


def test_in_range_values_are_read():
    parser = build_parser()
    args = parser.parse_args(["translate", "--run", "r", "--alpha", str(ALPHA_MAX), "--beta",
                              "0", "--beam", str(MAX_BEAM), "--nbest", "3"])
    assert (args.alpha, args.beta, args.beam, args.nbest) == (ALPHA_MAX, 0.0, MAX_BEAM, 3)
    assert parser.parse_args(["compare", "dates", "--dir", "d", "--scale", "0.25"]).scale == 0.25
    assert parser.parse_args(["compare", "dates", "--dir", "d"]).scale == 1.0


def test_the_number_types_say_what_they_want():
    with pytest.raises(argparse.ArgumentTypeError, match="must be a finite number, got 'nan'"):
        number_from()("nan")
    with pytest.raises(argparse.ArgumentTypeError, match="must be at most 5, got '6'"):
        number_from(most=5)("6")
    assert number_from(0, 1)("1") == 1.0 and number_from()("-1e300") == -1e300
    with pytest.raises(argparse.ArgumentTypeError, match="must be from 2 to 4, got '5'"):
        whole_number(2, 4)("5")
    with pytest.raises(argparse.ArgumentTypeError, match="expected a whole number, got '9{10}"):
        whole_number()("9" * 5000)  # past int()'s digit limit: a sentence, not a traceback
    assert whole_number(0)("0") == 0


def test_the_cli_bounds_are_the_penalty_bounds():
    from attnlab.decode import penalties

    assert (ALPHA_MAX, BETA_MAX) == (penalties.ALPHA_MAX, penalties.BETA_MAX)


def test_json_lines_never_hold_nan_or_infinity():
    assert json_line({"score": -1.5, "text": "ä"}) == '{"score": -1.5, "text": "ä"}'
    for bad in (math.nan, -math.inf):
        with pytest.raises(ValueError, match="not JSON compliant"):
            json_line({"score": bad})


def strict_json(line: str):
    """json.loads that refuses NaN, Infinity and -Infinity (which Python's accepts)."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(line, parse_constant=refuse)


@pytest.mark.slow
def test_huge_penalties_are_refused_and_the_largest_give_finite_json(dates_run, tmp_path,
                                                                      capsys):
    source = tmp_path / "in.txt"
    source.write_text("3 March 1999\n\n5. März 2024\n", encoding="utf-8")
    for flag in ("--alpha", "--beta"):
        # before: --beta 1e308 wrote "score": -Infinity (exit 0), --alpha 1e308 ended in
        # "unexpected OverflowError"
        with pytest.raises(SystemExit) as exit_:
            main(["translate", "--run", str(dates_run), "--input", str(source), flag, "1e308",
                  "--format", "json"])
        assert exit_.value.code == 2
        assert f"argument {flag}: must be from 0 to 10" in capsys.readouterr().err
    assert main(["translate", "--run", str(dates_run), "--input", str(source), "--alpha",
                 str(ALPHA_MAX), "--beta", str(BETA_MAX), "--nbest", "2", "--format",
                 "json"]) == 0
    records = [strict_json(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 3
    scores = [record["score"] for record in records if record["translation"]]
    scores += [h["score"] for record in records for h in record["hypotheses"]]
    assert scores and all(math.isfinite(score) for score in scores)
