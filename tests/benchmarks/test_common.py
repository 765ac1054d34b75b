"""benchmarks/common.py's option types, and every benchmark's options read through them: a number
out of its range, NaN, infinity or a typo is one sentence naming the option at argument parsing,
before anything is computed (`calibration.py --sims 0` was a ZeroDivisionError, `--sims -5` a
table)."""

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from common import listed, number, subset, whole_number

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
# written beside this change by other work (issue 45, item 1: explain.py; null_rate.py, new):
# each joins this test with its own arguments()
ELSEWHERE: set[str] = set()
SCRIPTS = sorted(path.stem for path in BENCHMARKS.glob("*.py")
                 if "argparse.ArgumentParser(" in path.read_text(encoding="utf-8")
                 and path.stem not in ELSEWHERE)


def refused(parse, text: str) -> str:
    with pytest.raises(argparse.ArgumentTypeError) as error:
        parse(text)
    return str(error.value)


def test_the_types_say_the_range_in_one_sentence():
    assert refused(whole_number(2), "1") == "must be at least 2, got '1'"
    assert refused(whole_number(1, 16), "17") == "must be from 1 to 16, got '17'"
    assert refused(whole_number(), "2.5") == "expected a whole number, got '2.5'"
    assert refused(number(0.0, above=True), "0") == "must be above 0, got '0'"
    assert refused(number(1.0, 10.0), "11") == "must be at least 1 and at most 10, got '11'"
    for text in ("nan", "inf", "-inf", "1e999"):
        assert refused(number(), text) == f"must be a finite number, got {text!r}"
    assert refused(listed(whole_number(2)), "2,1") == "must be at least 2, got '1' (in '2,1')"
    assert refused(listed(whole_number(2)), "2,,3") == ("expected values separated by commas, "
                                                        "got '2,,3'")
    assert listed(number(1.0))("1, 3") == (1.0, 3.0)
    assert refused(subset(("mean", "aer")), "mean,blue") == ("'blue' is not one of mean, aer, in "
                                                             "'mean,blue'")
    assert refused(subset(("mean", "aer")), "aer,aer") == "names one more than once: 'aer,aer'"
    assert subset(("mean", "aer"))("aer") == ("aer",)


def test_every_script_with_options_is_checked_here():
    assert {"attention", "calibration", "data_scale", "decode_speed", "gpu", "lstmn_speed",
            "serve_load", "train_throughput"} <= set(SCRIPTS)


def script(name: str):
    """benchmarks/NAME.py as a module of its own name (tests/attention would shadow
    `attention`)."""
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_numeric_option_of_every_script_is_range_checked(name):
    parser = script(name).arguments()
    for action in parser._actions:
        assert action.type not in (int, float), f"{name}.py {action.option_strings}: a bare " \
                                                f"{action.type.__name__} takes 0, -5 and nan"
    for action in (action for action in parser._actions
                   if action.type is not None and not isinstance(action.type, type)):  # Path
        where = f"{name}.py {action.option_strings or action.dest}"
        for text in ("-5", "nan", "1e999", "x"):
            with pytest.raises(argparse.ArgumentTypeError):
                action.type(text)
                pytest.fail(f"{where} takes {text!r}")
        default = action.default
        if default is not None and default != argparse.SUPPRESS:
            values = default if action.nargs == "+" else [default]
            for value in values:
                shown = ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
                action.type(shown)   # the default is in its own range


def run_script(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCHMARKS / argv[0]), *argv[1:]],
                          capture_output=True, text=True, timeout=300,
                          env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("argv, says", [
    (("calibration.py", "--sims", "0"), "argument --sims: must be at least 2, got '0'"),
    (("calibration.py", "--sims", "-5"), "argument --sims: must be at least 2, got '-5'"),
    (("calibration.py", "--metrics", "mean,blue"),
     "argument --metrics: 'blue' is not one of mean, aer, bleu, in 'mean,blue'"),
])
def test_calibration_refuses_before_it_simulates(argv, says, capsys):
    """Its parser, in this process (the first case also as a whole command, below)."""
    with pytest.raises(SystemExit) as stopped:
        script("calibration").arguments().parse_args(list(argv[1:]))
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"error: {says}")


@pytest.mark.slow   # a whole process importing torch and scipy: the refusals above run in-process
def test_calibration_refuses_as_a_command_without_a_traceback():
    done = run_script("calibration.py", "--sims", "0")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == ("calibration.py: error: argument --sims: must be at "
                                            "least 2, got '0'")
    assert "Traceback" not in done.stderr
