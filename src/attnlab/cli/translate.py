"""`attnlab translate --run DIR`: translate stdin or a file line by line, with alignments.

Also holds the options every command that loads a trained run shares (--run, --checkpoint,
--device, --beam, --alpha). Every such command calls `attnlab.files.check_outputs` on its
output paths before it loads anything.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from attnlab.errors import DataError
from attnlab.files import check_outputs


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_run_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    parser.add_argument("--run", required=required, metavar="DIR",
                        help="run directory written by attnlab train")
    parser.add_argument("--checkpoint", choices=("best", "last"),
                        help="weights to load (default: best if the run has it, else last)")
    parser.add_argument("--device", default="auto",
                        help="cpu, cuda, cuda:N, or auto (default: a GPU when there is one)")


def add_decode_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--beam", type=positive_int, metavar="K",
                        help="beam size, 1 = greedy (default: the run's decode.beam)")
    parser.add_argument("--alpha", type=float, metavar="A",
                        help="GNMT length penalty alpha (default: the run's decode.alpha)")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "translate", help="translate text with a trained run",
        description="Translate stdin (or --input) line by line: line i of the output is the "
        "translation of input line i, and an empty line stays empty. From a terminal each line "
        "is answered as soon as it is typed; otherwise lines are decoded in length-sorted "
        "batches.")
    add_run_arguments(parser)
    add_decode_arguments(parser)
    parser.add_argument("--input", metavar="F", help="input file, UTF-8 (default: stdin)")
    parser.add_argument("--output", metavar="F",
                        help="output file, written whole when the input is done, so a failed "
                        "or interrupted run leaves the old F (default: stdout, line by line)")
    parser.add_argument("--alignments", metavar="F",
                        help="also write one alignment line per input line to F (whole, at "
                        "the end)")
    parser.add_argument("--format", choices=("pharaoh", "json"), default="pharaoh",
                        help="pharaoh: 0-based 'source-target' links, each target word to its "
                        "most attended source word (characters for a character-level run); "
                        "json: pieces, words, both attention matrices, score (default pharaoh)")
    parser.add_argument("--batch-size", type=positive_int, metavar="N",
                        help="sentences per batch (default: the run's decode.batch_size)")
    parser.add_argument("--interactive", action="store_true",
                        help="answer each line at once even when stdin is not a terminal")
    parser.set_defaults(func=run)


def read_lines(stream: BinaryIO, name: str) -> Iterator[str]:
    """Lines of a binary stream as text, read lazily; invalid UTF-8 is a DataError naming the
    line (the decoding is the corpus reader's, so messages look the same)."""
    from attnlab.data.corpus import decode_line

    for number, raw in enumerate(stream, start=1):
        yield decode_line(raw, name, number)


def _standard_input() -> int | None:
    """The descriptor standard input reads, when it has one (not under a test's replacement)."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def run(args: argparse.Namespace) -> int:
    from attnlab.files import atomic_output
    from attnlab.translation.loading import load_run

    if args.input is not None and Path(args.input).is_dir():
        raise DataError(f"--input {args.input} is a folder, not a file")
    if args.input is not None and not Path(args.input).exists():
        raise DataError(f"input file not found: {args.input}")
    inputs = ({"--input": args.input} if args.input is not None
              else {"standard input": _standard_input()})
    check_outputs(inputs, {"--output": args.output, "--alignments": args.alignments})
    trained = load_run(args.run, args.checkpoint, args.device)
    if args.alignments and not trained.has_attention:
        raise DataError("this model has no attention, so it cannot write --alignments")
    interactive = args.interactive or (args.input is None and sys.stdin.isatty())
    with contextlib.ExitStack() as stack:
        source = (stack.enter_context(open(args.input, "rb")) if args.input
                  else sys.stdin.buffer)
        # Files are written whole at the end (an interrupted run leaves the old one); stdout
        # streams, one flushed line per answer.
        output = stack.enter_context(atomic_output(args.output)) if args.output else sys.stdout
        alignments = (stack.enter_context(atomic_output(args.alignments)) if args.alignments
                      else None)
        try:
            _translate(trained, args, read_lines(source, args.input or "<stdin>"), output,
                       alignments, pool_size=1 if interactive else None)
        except BrokenPipeError:  # the reader went away (| head): stop quietly, like cat
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _translate(trained, args, lines: Iterator[str], output: TextIO, alignments: TextIO | None,
               pool_size: int | None) -> None:
    """Write each translation (and alignment line) as soon as its pool is decoded."""
    from attnlab.translation.alignment import argmax_links, pharaoh_line
    from attnlab.translation.records import alignment_record

    pending: deque[str] = deque()  # lines read but not yet answered, oldest first

    def remember() -> Iterator[str]:
        for line in lines:
            pending.append(line)
            yield line

    results = trained.translate(remember(), beam=args.beam, alpha=args.alpha,
                                batch_size=args.batch_size, pool_size=pool_size)
    for number, result in enumerate(results, start=1):
        source = pending.popleft()
        output.write(result.text + "\n")
        if output is sys.stdout:
            output.flush()
        if alignments is None:
            continue
        if args.format == "json":
            record = alignment_record(number, source, result, characters=trained.character_level)
            alignments.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            alignments.write(pharaoh_line(argmax_links(result, trained.character_level)) + "\n")
