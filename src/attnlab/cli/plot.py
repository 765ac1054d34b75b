"""`attnlab plot`: the alignment heatmap of a sentence, or of a saved JSON alignment line."""

from __future__ import annotations

import argparse

from attnlab.errors import UserError
from attnlab.files import check_outputs

from .translate import add_run_arguments, positive_int


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plot", help="draw the alignment heatmap of a translation",
        description="Translate SENTENCE with --run and draw its attention (source words along "
        "the top, produced words down the side, as in Bahdanau et al. 2015, Fig. 3); or draw "
        "line N of a file written by translate --alignments F --format json. A character-level "
        "run is drawn by characters.")
    add_run_arguments(parser, required=False)
    parser.add_argument("sentence", nargs="?", help="the sentence to translate (with --run)")
    parser.add_argument("--beam", type=positive_int, metavar="K",
                        help="beam size (default: the run's decode.beam)")
    parser.add_argument("--json", metavar="FILE", help="a JSON alignment file instead of --run")
    parser.add_argument("--line", type=positive_int, default=1, metavar="N",
                        help="which line of --json, from 1 (default 1)")
    parser.add_argument("--output", default="alignment.png", metavar="PNG",
                        help="image file, .png, .svg or .pdf (default alignment.png)")
    level = parser.add_mutually_exclusive_group()
    level.add_argument("--pieces", dest="pieces", action="store_const", const=True,
                       help="one cell per subword piece")
    level.add_argument("--words", dest="pieces", action="store_const", const=False,
                       help="one cell per word (the default, except for character-level runs)")
    parser.set_defaults(func=run, pieces=None)


def run(args: argparse.Namespace) -> int:
    from attnlab.translation.figure import check_image_path, plot_record, plot_sentence
    from attnlab.translation.loading import load_run

    if (args.run is None) == (args.json is None):
        raise UserError("plot needs --run DIR with a sentence, or --json FILE (not both)")
    if args.run is not None and args.sentence is None:
        raise UserError("plot --run needs the sentence to translate, e.g. "
                        "attnlab plot --run DIR \"Zwei Männer spielen Fußball.\"")
    check_image_path(args.output)  # before any work: the format and the folder
    check_outputs({"--json": args.json}, {"--output": args.output})
    if args.json is not None:
        record, note = plot_record(args.json, args.line, args.output, pieces=args.pieces)
        print(f"{record.get('source', '')} -> {record.get('translation', '')}")
    else:
        trained = load_run(args.run, args.checkpoint, args.device)
        result, note = plot_sentence(trained, args.sentence, args.output, pieces=args.pieces,
                                     beam=args.beam)
        print(f"{args.sentence} -> {result.text}")
    print(f"heatmap: {args.output}")
    if note:
        print(f"note: {note}; plot a shorter sentence (or --words rather than --pieces) to read "
              f"every label")
    return 0
