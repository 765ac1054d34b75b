"""`attnlab explain`: attention beside three attributions of one translation (the Run's
explain), as a figure and as text or JSON."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

from attnlab.errors import DataError, UserError
from attnlab.explain.methods import METHODS, STEPS
from attnlab.files import check_outputs

from .options import Once, add_beam, add_run_arguments, whole_number


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explain", help="attention beside gradient, integrated-gradients and erasure "
        "attributions of one translation",
        description="Translate SENTENCE (or force --target) and measure, for every output "
        "piece, how much each source piece mattered, three ways, beside the attention: "
        "gradient x input; integrated gradients from an all-zero source embedding (--steps "
        "points); erasure (a source piece's embedding set to zero: the drop in log p of the "
        "output piece). Writes the views as one figure to explain.png in the current folder "
        "(or --output) and prints each output piece's most attended and most relevant source "
        "piece with its position, or everything as JSON with --format json. With --input FILE "
        "(- for standard input) it explains every line and prints one JSON line each.")
    add_run_arguments(parser)
    parser.add_argument("sentence", metavar="SENTENCE", nargs="?",
                        help="the sentence to translate (or --input)")
    parser.add_argument("--input", metavar="FILE", action=Once,
                        help="explain every line of FILE (UTF-8; - for standard input): one "
                        "JSON line each, no figure")
    parser.add_argument("--target", metavar="TEXT", action=Once,
                        help="explain this output instead of the model's translation")
    parser.add_argument("--method", action="append", choices=METHODS, metavar="METHOD",
                        help=f"an attribution to compute ({', '.join(METHODS)}); repeat for "
                        "several (default: all three)")
    parser.add_argument("--steps", type=whole_number(1, 1024), default=STEPS,
                        help="integrated gradients' points (default %(default)s)")
    add_beam(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default): a table of links; json: every value")
    parser.add_argument("--output", metavar="FILE.png", action=Once,
                        help="the figure (default: explain.png in the current folder)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.recipes import load, recipe_of_run
    from attnlab.train.capabilities import Explains

    if (args.sentence is None) == (args.input is None):
        raise UserError("explain takes a SENTENCE or --input FILE (one of the two)")
    if args.input is not None and (args.target is not None or args.output is not None):
        raise UserError("--input explains each line's own translation as JSON lines: "
                        "--target and --output are for one SENTENCE")
    run_class = recipe_of_run(args.run, args.checkpoint).run_class
    if not issubclass(run_class, Explains):
        raise UserError(f"explain reads translation runs; {args.run} is {run_class.kind}")
    output = args.output or "explain.png"   # never into the run (or an export) unasked
    if args.input is None:
        if not str(output).lower().endswith(".png"):
            raise UserError(f"--output {output}: the explanation figure is a .png file")
        check_outputs({}, {"--output": output})
    elif args.input != "-" and not Path(args.input).is_file():
        raise DataError(f"--input {args.input}: no such file")
    overrides = {} if args.beam is None else {"beam": args.beam}
    trained = load(args.run, checkpoint=args.checkpoint, device=args.device)
    assert isinstance(trained, Explains)  # its class was checked above
    options = {"methods": args.method or METHODS, "steps": args.steps, **overrides}
    if args.input is not None:
        return _explain_lines(trained, args.input, options)
    started = time.monotonic()
    print(f"explaining with {', '.join(options['methods'])}...", file=sys.stderr)
    found = trained.explain(args.sentence, args.target, **options)
    print(f"explained in {time.monotonic() - started:.1f} s", file=sys.stderr)
    found.save_png(output)
    if args.format == "json":
        print(json.dumps({**found.to_dict(), "figure": str(output)}, ensure_ascii=False,
                         allow_nan=False))
        return 0
    _print_table(found)
    print(f"figure: {output}")
    return 0


def _print_table(found) -> None:
    """Each output piece's most attended (most relevant) source piece, with its position
    (1-based, as `#3 1`): a repeated piece is told apart."""
    from attnlab.viz.heatmap import token_label  # a space shows as "␣", not as nothing

    print(f"{found.source} -> {found.text}")
    views = list(found.views)
    links = {view: found.links(view) for view in views}
    print("output piece".ljust(16) + "".join(view.replace("_", " ")[:22].ljust(24)
                                            for view in views))
    for row, piece in enumerate(found.target_pieces):
        cells = [f"#{links[view][row][0] + 1} "
                 f"{token_label(found.source_pieces[links[view][row][0]])}" for view in views]
        print(token_label(piece)[:15].ljust(16)
              + "".join(cell[:22].ljust(24) for cell in cells))


def _explain_lines(trained, path: str, options: dict) -> int:
    """One JSON line per input line (its explanation, or {"line", "error"} for a line that
    cannot be explained); a count of each on standard error."""
    from .translate import read_lines  # lazily, invalid UTF-8 named by its line

    with contextlib.ExitStack() as stack:
        stream = sys.stdin.buffer if path == "-" else stack.enter_context(open(path, "rb"))
        return _explain_each(trained, read_lines(stream, "<stdin>" if path == "-" else path),
                             options)


def _explain_each(trained, lines, options: dict) -> int:
    done = refused = 0
    for number, line in enumerate(lines, start=1):
        try:
            record = trained.explain(line, **options).to_dict()
            done += 1
        except UserError as error:
            record, refused = {"line": number, "error": str(error)}, refused + 1
        print(json.dumps(record, ensure_ascii=False, allow_nan=False), flush=True)
        print(f"[{number}] explained {done}, refused {refused}", file=sys.stderr)
    return 0 if refused == 0 else 1
