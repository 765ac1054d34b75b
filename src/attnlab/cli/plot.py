"""`attnlab plot`: the attention figure of one example with a run of any task, through its Run's
plot (a translation's heatmap, a caption's attention over the image, a language model's LSTMN
reading), or the heatmap of a saved JSON alignment line."""

from __future__ import annotations

import argparse
from pathlib import Path

from attnlab.errors import DataError, UserError
from attnlab.files import check_outputs

from .options import add_beam, add_hard_decoding, add_run_arguments, plot_path, positive_int

USAGE = """attnlab plot --run DIR [--run DIR ...] EXAMPLE [--checkpoint {best,last}]
                           [--device DEVICE] [--beam K] [--output FILE] [--pieces | --words]
                           [--hard-decoding {expectation,argmax}] [--matrix FILE] [--layer L]
                           [--head {N,mean}] [--heads-grid]
       attnlab plot --json FILE [--line N] [--output FILE] [--pieces | --words]"""

EPILOG = ("The LSTMN reading figure (Cheng et al. 2016, Fig. 1) of a translation model with an "
          "LSTMN encoder: attnlab lm plot --run DIR SENTENCE.")
# Each option of a task's plot (the Run's plot takes it by this name), with its flag.
PLOT_OPTIONS = {"pieces": "--pieces/--words", "hard_decoding": "--hard-decoding",
                "matrix": "--matrix", "layer": "--layer", "head": "--head",
                "heads_grid": "--heads-grid"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plot", help="draw the attention of one example: a translation's heatmap, a caption's "
        "attention over the image, an LSTMN's reading",
        usage=USAGE, epilog=EPILOG,
        description="Draw what a run attends to for EXAMPLE, by its task. A translation run: "
        "translate the sentence EXAMPLE and draw its attention (source words along "
        "the top, produced words down the side, as in Bahdanau et al. 2015, Fig. 3); or draw "
        "line N of a file written by translate --alignments FILE --format json. A "
        "character-level run is drawn by characters; several --run draw their ensemble's "
        "translation and mean attention. The figure goes to "
        "DIR/plots/alignment.png (with --json: into plots/ beside FILE) unless --output says "
        "otherwise; the path written is printed. A captioning run: caption the image file "
        "EXAMPLE and draw each word's attention over it (hard attention: the most likely "
        "location marked), into DIR/plots/EXAMPLE-attention.png. A language model (an LSTMN): "
        "its reading figure of the sentence EXAMPLE and its weight matrix, into "
        "DIR/plots/self-attention.png. A Transformer translation run draws the last layer's "
        "cross-attention averaged over its heads unless --layer and --head choose another, "
        "or every layer x head with --heads-grid.")
    add_arguments(parser)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, required=False, several=True)
    parser.add_argument("sentence", nargs="?", metavar="EXAMPLE",
                        help="the sentence to translate or read, or the image to caption "
                        "(with --run)")
    add_beam(parser)
    parser.add_argument("--json", metavar="FILE", help="a JSON alignment file instead of --run")
    parser.add_argument("--line", type=positive_int, default=1, metavar="N",
                        help="which line of --json, from 1 (default 1)")
    parser.add_argument("--output", metavar="FILE",
                        help="image file, .png, .svg or .pdf (default: DIR/plots/alignment.png)")
    level = parser.add_mutually_exclusive_group()
    level.add_argument("--pieces", dest="pieces", action="store_const", const=True,
                       help="one cell per subword piece")
    level.add_argument("--words", dest="pieces", action="store_const", const=False,
                       help="one cell per word (the default, except for character-level runs)")
    add_hard_decoding(parser)
    parser.add_argument("--matrix", metavar="FILE", help="language model: the weight matrix "
                        "(default: the --output file's name with -matrix)")
    parser.add_argument("--layer", type=int, metavar="L",
                        help="a Transformer translation run: the cross-attention layer to draw, "
                        "from 1 (default: the last); a language model: the LSTMN layer to "
                        "show, from 1 (default: the top one)")
    parser.add_argument("--head", metavar="{N,mean}",
                        help="a Transformer translation run: the head of the layer to draw, "
                        "from 1, or mean: the layer's heads averaged (the default)")
    parser.add_argument("--heads-grid", dest="heads_grid", action="store_const", const=True,
                        help="a Transformer translation run: draw every layer x head (and "
                        "each layer's mean) of the sentence in one grid")
    parser.set_defaults(func=run, pieces=None)


def run(args: argparse.Namespace) -> int:
    from attnlab.recipes import load, recipe_of_run
    from attnlab.translation.figure import check_image_path

    if (args.run is None) == (args.json is None):
        raise UserError("plot needs --run DIR with an example, or --json FILE (not both)")
    if args.json is not None:
        return _plot_json(args)
    run_class = recipe_of_run(args.run[0], args.checkpoint).run_class
    if args.sentence is None:
        raise UserError(f"plot --run needs the example to draw, e.g. attnlab plot --run DIR "
                        f"{run_class.plot_example}")
    options = {name: getattr(args, name) for name in PLOT_OPTIONS
               if getattr(args, name) is not None}
    refused = [PLOT_OPTIONS[name] for name in options if name not in run_class.plot_options]
    if refused:
        raise UserError(f"{refused[0]} is not an option for {run_class.kind}'s plot")
    output = plot_path(args.output, args.run[0], run_class.plot_name(args.sentence))
    check_image_path(output)  # before any work: the format and the folder
    check_outputs({}, {"--output": output, "--matrix": args.matrix})
    if "hard_decoding" in options:
        options["hard_attention"] = options.pop("hard_decoding")
    if args.beam is not None:
        options["beam"] = args.beam
    trained = load(args.run, checkpoint=args.checkpoint, device=args.device)
    print("\n".join(trained.plot(args.sentence, output, **options)))
    return 0


def _plot_json(args: argparse.Namespace) -> int:
    """The heatmap of line --line of a file translate --alignments --format json wrote."""
    from attnlab.translation.figure import check_image_path, plot_record

    if not Path(args.json).is_file():
        raise DataError(f"--json {args.json} is not a file")
    name = f"{Path(args.json).stem}-line{args.line}.png"
    output = plot_path(args.output, Path(args.json).parent, name)
    check_image_path(output)
    check_outputs({"--json": args.json}, {"--output": output})
    record, note = plot_record(args.json, args.line, output, pieces=args.pieces)
    print(f"{record.get('source', '')} -> {record.get('translation', '')}")
    print(f"heatmap: {output}")
    if note:
        print(f"note: {note}; plot a shorter sentence (or --words rather than --pieces) to read "
              f"every label")
    return 0
