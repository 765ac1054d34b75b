"""`attnlab compare SUITE --dir DIR`: train every member of a suite and write one report."""

from __future__ import annotations

import argparse
import sys
import textwrap

from attnlab import configs
from attnlab.errors import UserError

from .options import number_from, positive_int

# The most --scale multiplies a suite's updates by: far past any use (4 on a GPU), and it keeps
# every member's number of updates a whole number (NaN or infinity would not be).
MAX_SCALE = 1000.0

DESCRIPTION = """\
Reproduce one of the claims of the attention papers (as surveyed in Lilian Weng's "Attention?
Attention!", 2018): train every member of a SUITE (the same data, vocabulary settings, seed and
number of updates for each) as an ordinary run directory DIR/<member>, score it, and write
DIR/report.html (self-contained) and DIR/results.md.

Suites (shipped with attnlab; `attnlab config show NAME` prints one, with the command that
makes its data; or give your own suite YAML file):

{suites}

Rerunning the same command skips finished members and resumes an interrupted one from its
last checkpoint. Before anything trains, every run already in DIR (finished or not) is checked
against the suite: a member whose config has changed is refused, unless --retrain NAME asks
for its runs to be replaced. --only NAME runs one member (spread members over machines or
devices, each an ordinary training run); a run that another command is training is refused at
once (naming its process), or waited for with --wait. --report gathers whatever is finished
into the report.
"""


def describe_suites(names: list[str]) -> str:
    """One line per shipped suite, from its file's first comment line, so the list is never
    behind the suites."""
    return "\n".join(textwrap.fill(f"{name}: {configs.summary(configs.suite_path(name))}",
                                    width=92, initial_indent="- ", subsequent_indent="  ")
                      for name in names)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    suites = configs.suite_names()
    parser = subparsers.add_parser(
        "compare", help="train a suite of models and compare them in one report",
        description=DESCRIPTION.format(suites=describe_suites(suites)),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", metavar="SUITE",
                        help=f"a suite name ({', '.join(suites)}) or a suite YAML "
                        "file")
    parser.add_argument("--dir", required=True, metavar="DIR",
                        help="where the members' run directories and the report go")
    parser.add_argument("--only", metavar="NAME", action="append",
                        help="run this member only (repeat for several)")
    parser.add_argument("--seeds", type=positive_int, metavar="N",
                        help="train every member with seeds 1..N (default: the suite's seeds)")
    parser.add_argument("--seed", type=positive_int, metavar="K",
                        help="run seed K only (of every member, or of --only's)")
    parser.add_argument("--jobs", type=positive_int, default=1, metavar="N",
                        help="train N runs at once, each a process with one torch thread "
                        "(default 1; 2 on a 2-core machine, more on a GPU)")
    parser.add_argument("--retrain", action="append", default=[], metavar="NAME",
                        help="train this member's runs afresh, replacing the ones in DIR "
                        "(repeat for more members); without it a member whose config has "
                        "changed is refused")
    parser.add_argument("--wait", action="store_true",
                        help="wait for a run that another command is training, instead of "
                        "refusing it")
    parser.add_argument("--report", action="store_true",
                        help="train nothing: write the report from the finished members")
    parser.add_argument("--explain", action="store_true",
                        help="train nothing: give each finished run with attention its "
                        "explanation record (a translation run: every way to read links and "
                        "its AER, the faithfulness tests, uniform attention; an LSTMN "
                        "language model: the faithfulness tests of its self-attention; the "
                        "suite's explain: block says how much), then write the report with "
                        "its 'Is attention an alignment? Is it an explanation?' section")
    parser.add_argument("--data", metavar="DIR",
                        help="the data folder of every member (default: the suite's)")
    parser.add_argument("--scale", type=number_from(0, MAX_SCALE, above=True), default=1.0,
                        metavar="X", help="multiply every member's number of updates, e.g. 4 "
                        f"on a GPU: above 0, at most {MAX_SCALE:g} (default 1)")
    parser.add_argument("--rwth", metavar="DIR",
                        help="the RWTH German-English gold alignments for AER (default: "
                        "$ATTNLAB_DATA/rwth-deen-gold when set)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bars, while members train or are scored (there are "
                        "none anyway when standard error is not a terminal)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.compare import RunOptions, load_suite, run_suite, write_report

    for flag, given in (("--report", args.report), ("--explain", args.explain)):
        if given and (args.only or args.seed or args.retrain):
            raise SystemExit(f"attnlab compare: {flag} trains nothing; --only, --seed and "
                             f"--retrain train: give one of them")
    if args.only and len(set(args.only)) < len(args.only):
        raise UserError(f"--only names a member twice: {' '.join(args.only)}")
    suite = load_suite(args.suite)
    options = RunOptions(data=args.data, scale=args.scale, rwth=args.rwth,
                         progress=not args.quiet, seeds=args.seeds,
                         retrain=frozenset(args.retrain), wait=args.wait)
    if args.explain:
        from attnlab.compare.run.asked import as_asked
        from attnlab.compare.run.explain_records import explain_suite

        # the runs as they were trained (their seeds, data, scale), unless told otherwise
        explain_suite(suite, args.dir, as_asked(args.dir, options))
    elif not args.report:
        run_suite(suite, args.dir, options, only=args.only, seed=args.seed, jobs=args.jobs)
        if args.seed:   # one run of several trained side by side (--jobs's children do this)
            print(f"seed {args.seed} finished; attnlab compare {args.suite} --dir {args.dir} "
                  f"--report gathers the finished runs", file=sys.stderr)
            return 0
    # after training too (every member's runs, or --only's): the report of what is finished
    written = write_report(suite, args.dir, options)
    for path in written:
        print(f"wrote {path}")
    return 0
