"""`attnlab evaluate --run DIR --src FILE --ref FILE`: BLEU, chrF, BLEU by length, AER."""

from __future__ import annotations

import argparse
import json
import math
import sys

from attnlab.files import check_outputs

from .options import add_quiet, add_run_arguments, check_runs
from .translate import add_decode_arguments, decode_options, load_for_decoding


def bucket_edges(text: str) -> tuple[float, ...]:
    """'0,10,20' -> (0, 10, 20, inf): increasing whole numbers of source words; the last
    bucket is open."""
    try:
        edges = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected whole numbers like 0,10,20, got {text!r}") from None
    pairs = zip(edges[:-1], edges[1:], strict=True)
    if not edges or edges[0] != 0 or any(low >= high for low, high in pairs):
        raise argparse.ArgumentTypeError(f"edges must start at 0 and increase, got {text!r}")
    return (*edges, math.inf)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "evaluate", help="score a trained run: BLEU, chrF, BLEU by length, AER",
        description="Translate --src and score it against --ref: sacreBLEU BLEU (with its "
        "signature), chrF and lowercased 13a BLEU; BLEU by source length; and AER of the "
        "attention while forced-decoding the reference, on the gold sets that apply: the dates "
        "task's gold (the .align file beside --src) or --align-gold, and for a German-English "
        "run the RWTH gold set (--rwth DIR, or $ATTNLAB_DATA/rwth-deen-gold). One line says "
        "which gold sets are used, or why there is none. Several --run evaluate their "
        "ensemble (AER of their mean attention). The time spent translating is printed on "
        "standard error.")
    add_run_arguments(parser, several=True)
    add_decode_arguments(parser)
    parser.add_argument("--src", metavar="FILE", help="source lines, plain or .gz "
                        "(default: the run's test split)")
    parser.add_argument("--ref", metavar="FILE", help="reference lines, plain or .gz")
    parser.add_argument("--align-gold", metavar="FILE",
                        help="gold alignments of the --src/--ref pairs")
    parser.add_argument("--align-format", choices=("text", "rwth"), default="text",
                        help="text: 0-based i-j links (the Pharaoh format of Moses and "
                        "fast_align); rwth: 1-indexed i-j sure, ipj possible")
    parser.add_argument("--rwth", metavar="DIR",
                        help="RWTH de-en gold set (default: $ATTNLAB_DATA/rwth-deen-gold, used "
                        "for a German-English run when ATTNLAB_DATA is set and that folder "
                        "exists; no RWTH gold otherwise)")
    parser.add_argument("--no-rwth", action="store_true", help="skip the RWTH gold set")
    parser.add_argument("--buckets", type=bucket_edges, default=None, metavar="EDGES",
                        help="source-length bucket edges in words (default 0,10,20,30,40,50)")
    parser.add_argument("--bucket-plot", metavar="FILE",
                        help="write the BLEU-by-length plot (.png, .svg or .pdf)")
    parser.add_argument("--output", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--hypotheses", metavar="FILE", help="write the translations")
    parser.add_argument("--timing", action="store_true",
                        help="print the decoding speed on standard error (it is printed there "
                        "anyway when standard error is a terminal, unless --quiet)")
    add_quiet(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.eval import DEFAULT_EDGES
    from attnlab.train.progress import wanted as progress_wanted
    from attnlab.translation.evaluate import evaluate_run, read_pairs
    from attnlab.translation.golds import choose_golds

    check_runs(args.run, args.checkpoint, "evaluate")
    outputs = {"--bucket-plot": args.bucket_plot, "--output": args.output,
               "--hypotheses": args.hypotheses}
    check_outputs({"--src": args.src, "--ref": args.ref, "--align-gold": args.align_gold},
                  outputs)  # before the evaluation, which may take minutes
    trained = load_for_decoding(args)
    sources, references, src_path = read_pairs(trained, args.src, args.ref)
    golds = choose_golds(trained, src_path, sources, references, align_gold=args.align_gold,
                         one_indexed=args.align_format == "rwth", rwth=args.rwth,
                         use_rwth=not args.no_rwth)
    name = " + ".join(args.run) if len(args.run) > 1 else trained.directory
    print(f"{name} ({trained.checkpoint} checkpoint, {_search_line(args.decode)}) on "
          f"{src_path}")
    print(golds.line(), flush=True)
    evaluation = evaluate_run(trained, sources, references, edges=args.buckets or DEFAULT_EDGES,
                              golds=golds.golds, progress=not args.quiet,
                              **decode_options(args))
    print(evaluation.format())
    # On standard error, as progress is: a timing is not a result (stdout stays the same), and
    # a pipe or CI gets no progress unless it asks.
    if args.timing or progress_wanted(not args.quiet):
        print(evaluation.speed_line(), file=sys.stderr)
    write_outputs(args, evaluation)
    return 0


def _search_line(decode) -> str:
    """'beam 5', with the penalties when they are not the defaults: 'beam 5, beta 0.2'."""
    parts = [f"beam {decode.beam}"]
    if decode.length_penalty != "gnmt":
        parts.append(f"length penalty {decode.length_penalty}")
    if decode.beta:
        parts.append(f"beta {decode.beta:g}")
    return ", ".join(parts)


def write_outputs(args: argparse.Namespace, evaluation) -> None:
    """The files asked for, each written whole or not at all."""
    from attnlab.files import atomic_output
    from attnlab.translation.figure import buckets_png

    if args.bucket_plot:
        with atomic_output(args.bucket_plot, "wb") as file:
            file.write(buckets_png(evaluation.buckets))
        print(f"BLEU-by-length plot: {args.bucket_plot}")
    if args.output:
        with atomic_output(args.output) as file:
            file.write(json.dumps(evaluation.to_dict(), indent=2, ensure_ascii=False) + "\n")
        print(f"results: {args.output}")
    if args.hypotheses:
        with atomic_output(args.hypotheses) as file:
            file.writelines(hypothesis + "\n" for hypothesis in evaluation.hypotheses)
        print(f"translations: {args.hypotheses}")
