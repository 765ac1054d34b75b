"""The grammar every command that reads a trained run shares, written once so that translate,
evaluate, plot, report, lm and caption spell it the same way:

    --run DIR  --checkpoint {best,last}  --device DEVICE  --beam K  --batch-size N
    --output FILE  --quiet

and the run's task, checked before anything else: a captioning run given to `evaluate` is one
sentence naming the command that reads it. Every number an option reads has its type here
(whole_number, number_from): a value out of its range, NaN or infinity is one sentence naming
the option, before anything runs.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

from attnlab.errors import CheckpointError, UserError
from attnlab.files import writing

# The most beams (and n-best hypotheses) a search may keep: past a few dozen a wider beam only
# finds shorter, worse translations (Koehn and Knowles 2017, sec. 3.6), and each beam costs a
# decoder row per sentence.
MAX_BEAM = 1000
# attnlab.decode.penalties's ALPHA_MAX and BETA_MAX (not imported here: it imports torch).
ALPHA_MAX = BETA_MAX = 10.0


def whole_number(least: int = 1, most: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from `least` (to `most`), refused otherwise in one
    sentence that argparse puts after the option's name."""
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < least or (most is not None and value > most):
            wanted = f"at least {least}" if most is None else f"from {least} to {most}"
            raise argparse.ArgumentTypeError(f"must be {wanted}, got {text!r}")
        return value

    parse.__name__ = "whole number"
    return parse


def number_from(least: float = -math.inf, most: float = math.inf, *,
           above: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number from `least` (above it with `above`) to `most`. NaN,
    infinity and numbers past a float (1e999) are refused: no option means "unbounded" by
    them, and they would end in an error far from the option (or in output that is not
    JSON)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if value < least or (above and value == least) or value > most:
            raise argparse.ArgumentTypeError(f"must be {_range(least, most, above)}, "
                                             f"got {text!r}")
        return value

    parse.__name__ = "number"
    return parse


def _range(least: float, most: float, above: bool) -> str:
    """'above 0', 'at least 0', 'from 0 to 10', 'above 0 and at most 1000'."""
    low = "" if least == -math.inf else f"{'above' if above else 'at least'} {_shown(least)}"
    if most == math.inf:
        return low or "a finite number"
    if not low:
        return f"at most {_shown(most)}"
    return (f"above {_shown(least)} and at most {_shown(most)}" if above
            else f"from {_shown(least)} to {_shown(most)}")


def _shown(bound: float) -> str:
    """A bound as people write it: 1048576, not 1.04858e+06; 0.5."""
    return str(int(bound)) if float(bound).is_integer() and abs(bound) < 1e15 else f"{bound:g}"


positive_int = whole_number(1)
positive_float = number_from(0, above=True)
beam_size = whole_number(1, MAX_BEAM)


class Once(argparse.Action):
    """Store an option's value, refusing it given twice (argparse would keep the last without a
    word: `--run A --run B` read B alone)."""

    def __call__(self, parser, namespace, values, option_string=None):
        earlier = getattr(namespace, self.dest, None)
        if earlier is not None and earlier != self.default:
            parser.error(f"argument {option_string}: given twice ({earlier} and {values}); "
                         f"this command takes one")
        setattr(namespace, self.dest, values)


def add_run_arguments(parser: argparse.ArgumentParser, *, required: bool = True,
                      what: str = "run directory written by attnlab train",
                      several: bool = False) -> None:
    """--run DIR, --checkpoint {best,last}, --device DEVICE; with `several`, --run may be
    given more than once (an ensemble; args.run is then a list)."""
    if several:
        parser.add_argument("--run", required=required, metavar="DIR", action="append",
                            help=f"{what}; give it more than once to decode with an ensemble "
                            "of runs that share their vocabularies (each step the mean of "
                            "their log-probabilities, the attention their mean)")
    else:
        parser.add_argument("--run", required=required, metavar="DIR", help=what, action=Once)
    parser.add_argument("--checkpoint", choices=("best", "last"),
                        help="weights to load (default: best, else last)")
    add_device(parser)


def device_name(text: str) -> str:
    """--device's value, spelt as train.device's: auto, cpu, cuda or cuda:N."""
    from attnlab.train.config import check_device_name

    try:
        check_device_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def add_device(parser: argparse.ArgumentParser) -> None:
    """--device DEVICE, auto by default: the GPU when torch sees one. The GPU's results differ
    from the CPU's only in floating-point rounding (the same weights, kernels that sum in
    another order), and --device cpu gives the CPU's figures on any machine."""
    parser.add_argument("--device", default="auto", metavar="DEVICE", type=device_name,
                        help="auto (default: a GPU when there is one, else the CPU), cpu, cuda "
                        "or cuda:N")


def add_beam(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--beam", type=beam_size, metavar="K",
                        help=f"beam size, 1 = greedy, at most {MAX_BEAM} (default: the run's "
                        "decode.beam)")


def add_hard_decoding(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hard-decoding", choices=["expectation", "argmax"],
                        help="hard-attention captioners: read the soft expectation or only the "
                        "most likely location (default: the config's decode.hard_attention)")


def add_batch_size(parser: argparse.ArgumentParser, unit: str = "sentences",
                   default: str = "the run's decode.batch_size") -> None:
    parser.add_argument("--batch-size", type=positive_int, metavar="N",
                        help=f"{unit} per batch (default: {default})")


def add_output(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--output", metavar="FILE", help=what)


def add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar (there is none anyway when standard error is not "
                        "a terminal)")


def check_task(run: str | None, checkpoint: str | None, command: str) -> None:
    """One sentence when `run` is not a trained run (missing, a file, a folder of runs: see
    attnlab.train.runs.not_a_run), or holds a model of a task whose record does not name
    `command` ("caption predict") as its predict verb, naming the command that reads it; called
    before any other check or work, so that nothing is written beside a folder that is not a
    run. A run that cannot be read otherwise (a damaged meta.json) is left to the loading."""
    from attnlab.recipes import RECIPES
    from attnlab.train import RunDir, choose_checkpoint, run_task

    if run is None:
        return
    choose_checkpoint(RunDir(run), checkpoint)
    try:
        task = run_task(run, checkpoint)
    except UserError:
        return
    readers = [recipe for recipe in RECIPES.values()
               if recipe.commands.get("predict") == f"attnlab {command}"]
    if task not in RECIPES or not readers or RECIPES[task] in readers:
        return
    raise CheckpointError(f"{run} is a {RECIPES[task].title} run, not a {readers[0].title} "
                          f"run; use {RECIPES[task].commands['predict']} --run {run}")


def check_runs(runs: list[str] | None, checkpoint: str | None, command: str) -> None:
    """check_task for each run of a repeatable --run."""
    for run in runs or []:
        check_task(run, checkpoint, command)


def plot_path(output: str | None, folder: str | Path, name: str) -> str:
    """`output`, or FOLDER/plots/NAME: a figure goes into the run directory by default (its
    plots/ folder made here)."""
    if output is not None:
        return output
    if not Path(folder).is_dir():
        raise CheckpointError(f"run directory {folder} does not exist")
    plots = Path(folder) / "plots"
    with writing(plots):
        plots.mkdir(exist_ok=True)
    return str(plots / name)
