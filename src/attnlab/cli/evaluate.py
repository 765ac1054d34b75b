"""`attnlab evaluate --run DIR`: score a trained run of any task on its test data, through its
Run's evaluate (translation: BLEU, chrF, BLEU by length, AER; captioning: BLEU-1..4 and
localisation; a language model: perplexity). The options a task does not take are refused in
one sentence, before anything is loaded."""

from __future__ import annotations

import argparse
import json
import math
import sys

from attnlab.errors import UserError
from attnlab.files import check_outputs

from .options import add_hard_decoding, add_quiet, add_run_arguments, positive_int
from .translate import add_decode_arguments

# The task options (the Run's evaluate_options take them by these names) and their flags.
TASK_OPTIONS = {"src": "--src", "ref": "--ref", "align_gold": "--align-gold",
                "align_format": "--align-format", "rwth": "--rwth", "no_rwth": "--no-rwth",
                "buckets": "--buckets", "split": "--split", "limit": "--limit", "text": "--text"}
# Settings of the Run's decode config (DecodeConfig.overridden), by flag.
DECODE_FLAGS = {"beam": "beam", "alpha": "alpha", "length_penalty": "length_penalty",
                "beta": "beta", "hard_decoding": "hard_attention"}
# Files an evaluation may write beside --output (Evaluation.outputs), by flag.
OUTPUT_FLAGS = {"hypotheses": "--hypotheses", "bucket_plot": "--bucket-plot"}


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
        "evaluate", help="score a trained run: BLEU, chrF, BLEU by length, AER; captions' "
        "BLEU and localisation; perplexity",
        description="Score a trained run of any task on its test data. A translation run: "
        "translate --src and score it against --ref: sacreBLEU BLEU (with its "
        "signature), chrF and lowercased 13a BLEU; BLEU by source length; and AER of the "
        "attention while forced-decoding the reference, on the gold sets that apply: the dates "
        "task's gold (the .align file beside --src) or --align-gold, and for a German-English "
        "run the RWTH gold set (--rwth DIR, or $ATTNLAB_DATA/rwth-deen-gold). One line says "
        "which gold sets are used, or why there is none. Several --run evaluate their "
        "ensemble (AER of their mean attention). The time spent translating is printed on "
        "standard error. A captioning run: caption --split's images (default its test split) "
        "and score BLEU-1..4 against all references and, on the shapes data, localisation. A "
        "language model: perplexity on --text (default its data.test).")
    add_arguments(parser)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, several=True)
    add_decode_arguments(parser)
    parser.add_argument("--src", metavar="FILE", help="source lines, plain or .gz "
                        "(default: the run's test split)")
    parser.add_argument("--ref", metavar="FILE", help="reference lines, plain or .gz")
    parser.add_argument("--align-gold", metavar="FILE",
                        help="gold alignments of the --src/--ref pairs")
    parser.add_argument("--align-format", choices=("text", "rwth"),
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
    parser.add_argument("--split", metavar="NAME",
                        help="captioning: the split to score (default: the config's test split)")
    parser.add_argument("--limit", type=positive_int, metavar="N",
                        help="captioning: score only the first N images")
    add_hard_decoding(parser)
    parser.add_argument("--text", metavar="FILE", help="language model: text file, one "
                        "sentence a line, plain or .gz (default: the run's data.test)")
    parser.add_argument("--output", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--hypotheses", metavar="FILE", help="write the translations")
    parser.add_argument("--timing", action="store_true",
                        help="print the decoding speed on standard error (it is printed there "
                        "anyway when standard error is a terminal, unless --quiet)")
    add_quiet(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.recipes import load, recipe_of_run
    from attnlab.train.progress import wanted as progress_wanted

    recipes = [recipe_of_run(one, args.checkpoint)
               for one in args.run]  # a missing or foreign run: one sentence, first
    run_class = recipes[0].run_class
    given = {name: getattr(args, name) for name in TASK_OPTIONS
             if getattr(args, name, None) not in (None, False)}
    refused = [TASK_OPTIONS[name] for name in given if name not in run_class.evaluate_options]
    refused += [flag for name, flag in OUTPUT_FLAGS.items()
                if getattr(args, name) and name not in run_class.evaluate_outputs]
    if refused:
        takes = [TASK_OPTIONS[name] for name in run_class.evaluate_options if name in TASK_OPTIONS]
        raise UserError(f"{refused[0]} is not an option for {run_class.kind}; its evaluate "
                        f"takes {', '.join(takes) or 'no task options'}")
    outputs = {flag: getattr(args, name) for name, flag in OUTPUT_FLAGS.items()}
    check_outputs({flag: getattr(args, name) for name, flag in TASK_OPTIONS.items()
                   if name in ("src", "ref", "align_gold", "text")},
                  {**outputs, "--output": args.output})  # before minutes of evaluation
    device = "cpu" if args.quantize and args.device == "auto" else args.device
    trained = load(args.run, checkpoint=args.checkpoint, device=device).quantized(args.quantize)
    settings = {setting: getattr(args, flag) for flag, setting in DECODE_FLAGS.items()
                if getattr(args, flag) is not None}
    if args.batch_size is not None:
        given["batch_size"] = args.batch_size
    if args.replace_unk or args.dictionary:
        given.update(replace_unk=args.replace_unk, dictionary=args.dictionary)
    evaluation = trained.evaluate(progress=not args.quiet, log=_flushed, **given, **settings)
    print(evaluation.format())
    # On standard error, as progress is: a timing is not a result (stdout stays the same), and
    # a pipe or CI gets no progress unless it asks.
    timing = evaluation.timing()
    if timing is not None and (args.timing or progress_wanted(not args.quiet)):
        print(timing, file=sys.stderr)
    write_outputs(args, evaluation)
    return 0


def _flushed(line: str) -> None:
    print(line, flush=True)


def write_outputs(args: argparse.Namespace, evaluation) -> None:
    """The files asked for, each written whole or not at all."""
    from attnlab.files import atomic_output

    files = evaluation.outputs()
    written = [("bucket_plot", "BLEU-by-length plot"), ("output", "results"),
               ("hypotheses", "translations")]
    for name, label in written:
        path = getattr(args, name)
        if not path:
            continue
        content = (json.dumps(evaluation.to_dict(), indent=2, ensure_ascii=False) + "\n"
                   if name == "output" else files[name]())
        with atomic_output(path, "wb" if isinstance(content, bytes) else "w") as file:
            file.write(content)
        print(f"{label}: {path}")
