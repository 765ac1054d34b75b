"""`attnlab explain`: attention beside three attributions of one translation (the Run's
explain), as a figure and as text or JSON."""

from __future__ import annotations

import argparse
import json

from attnlab.errors import UserError
from attnlab.explain.methods import METHODS, STEPS
from attnlab.files import check_outputs

from .options import Once, add_beam, add_run_arguments, plot_path, whole_number


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explain", help="attention beside gradient, integrated-gradients and erasure "
        "attributions of one translation",
        description="Translate SENTENCE (or force --target) and measure, for every output "
        "piece, how much each source piece mattered, three ways, beside the attention: "
        "gradient x input; integrated gradients from an all-zero source embedding (--steps "
        "points); erasure (a source piece's embedding set to zero: the drop in log p of the "
        "output piece). Writes one heatmap per view side by side to DIR/plots/explain.png "
        "(or --output) and prints each output piece's most attended and most relevant source "
        "piece, or everything as JSON with --format json.")
    add_run_arguments(parser)
    parser.add_argument("sentence", metavar="SENTENCE", help="the sentence to translate")
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
                        help="the figure (default: DIR/plots/explain.png)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.recipes import load, recipe_of_run
    from attnlab.train.capabilities import Explains
    from attnlab.viz.heatmap import token_label  # a space shows as "␣", not as nothing

    run_class = recipe_of_run(args.run, args.checkpoint).run_class
    if not issubclass(run_class, Explains):
        raise UserError(f"explain reads translation runs; {args.run} is {run_class.kind}")
    output = plot_path(args.output, args.run, "explain.png")
    if not str(output).lower().endswith(".png"):
        raise UserError(f"--output {output}: the explanation figure is a .png file")
    check_outputs({}, {"--output": output})
    overrides = {} if args.beam is None else {"beam": args.beam}
    trained = load(args.run, checkpoint=args.checkpoint, device=args.device)
    assert isinstance(trained, Explains)  # its class was checked above
    found = trained.explain(args.sentence, args.target, methods=args.method or METHODS,
                            steps=args.steps, **overrides)
    found.save_png(output)
    if args.format == "json":
        print(json.dumps({**found.to_dict(), "figure": str(output)}, ensure_ascii=False,
                         allow_nan=False))
        return 0
    print(f"{found.source} -> {found.text}")
    views = list(found.views)
    links = {view: found.links(view) for view in views}
    print("output piece".ljust(16) + "".join(view.replace("_", " ")[:22].ljust(24)
                                            for view in views))
    for row, piece in enumerate(found.target_pieces):
        cells = [token_label(found.source_pieces[links[view][row][0]]) for view in views]
        print(token_label(piece)[:15].ljust(16)
              + "".join(cell[:22].ljust(24) for cell in cells))
    print(f"figure: {output}")
    return 0

