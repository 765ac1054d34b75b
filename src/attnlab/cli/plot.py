"""`attnlab plot`: the alignment heatmap of a sentence, or of a saved JSON alignment line (the
LSTMN reading figure is `attnlab lm plot`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from attnlab.errors import DataError, UserError
from attnlab.files import check_outputs

from .options import add_beam, add_run_arguments, check_runs, plot_path, positive_int

USAGE = """attnlab plot --run DIR [--run DIR ...] SENTENCE [--checkpoint {best,last}]
                           [--device DEVICE] [--beam K] [--output FILE] [--pieces | --words]
       attnlab plot --json FILE [--line N] [--output FILE] [--pieces | --words]"""

EPILOG = ("The LSTMN reading figure (Cheng et al. 2016, Fig. 1) of a language model, or of a "
          "translation model with an LSTMN encoder: attnlab lm plot --run DIR SENTENCE.")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plot", help="draw the alignment heatmap of a translation",
        usage=USAGE, epilog=EPILOG,
        description="Translate SENTENCE with --run and draw its attention (source words along "
        "the top, produced words down the side, as in Bahdanau et al. 2015, Fig. 3); or draw "
        "line N of a file written by translate --alignments FILE --format json. A "
        "character-level run is drawn by characters; several --run draw their ensemble's "
        "translation and mean attention. The figure goes to "
        "DIR/plots/alignment.png (with --json: into plots/ beside FILE) unless --output says "
        "otherwise; the path written is printed.")
    add_run_arguments(parser, required=False, several=True)
    parser.add_argument("sentence", nargs="?", metavar="SENTENCE",
                        help="the sentence to translate (with --run)")
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
    parser.set_defaults(func=run, pieces=None)


def run(args: argparse.Namespace) -> int:
    from attnlab.translation.ensemble import load_ensemble
    from attnlab.translation.figure import check_image_path, plot_record, plot_sentence

    check_runs(args.run, args.checkpoint, "plot")
    if (args.run is None) == (args.json is None):
        raise UserError("plot needs --run DIR with a sentence, or --json FILE (not both)")
    if args.run is not None and args.sentence is None:
        raise UserError("plot --run needs the sentence to translate, e.g. "
                        "attnlab plot --run DIR \"Zwei Männer spielen Fußball.\"")
    if args.json is not None and not Path(args.json).is_file():
        raise DataError(f"--json {args.json} is not a file")
    if args.run is not None:
        output = plot_path(args.output, args.run[0], "alignment.png")
    else:
        name = f"{Path(args.json).stem}-line{args.line}.png"
        output = plot_path(args.output, Path(args.json).parent, name)
    check_image_path(output)  # before any work: the format and the folder
    check_outputs({"--json": args.json}, {"--output": output})
    if args.json is not None:
        record, note = plot_record(args.json, args.line, output, pieces=args.pieces)
        print(f"{record.get('source', '')} -> {record.get('translation', '')}")
    else:
        trained = load_ensemble(args.run, args.checkpoint, args.device)
        result, note = plot_sentence(trained, args.sentence, output, pieces=args.pieces,
                                     beam=args.beam)
        print(f"{args.sentence} -> {result.text}")
    print(f"heatmap: {output}")
    if note:
        print(f"note: {note}; plot a shorter sentence (or --words rather than --pieces) to read "
              f"every label")
    return 0
