"""`attnlab translate --run DIR`: translate stdin or a file line by line, with alignments, an
n-best list, or at an interactive prompt. (The flags shared with the other commands that read a
trained run are in options.py.)"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import IO, BinaryIO

from attnlab.errors import DataError, UserError
from attnlab.files import check_outputs

from .options import (
    ALPHA_MAX,
    BETA_MAX,
    add_batch_size,
    add_beam,
    add_quiet,
    add_run_arguments,
    beam_size,
    check_runs,
    number_from,
)

HISTORY = "~/.attnlab_history"  # what was typed at the prompt, for the next session too


def add_decode_arguments(parser: argparse.ArgumentParser) -> None:
    """--beam K, --alpha A, --length-penalty, --beta B, --replace-unk, --dictionary FILE,
    --batch-size N, --quantize int8."""
    add_beam(parser)
    parser.add_argument("--alpha", type=number_from(0, ALPHA_MAX), metavar="A",
                        help=f"GNMT length penalty alpha, from 0 to {ALPHA_MAX:g} (Wu et al. "
                        "2016 found 0.6 to 1 best; default: the run's decode.alpha)")
    parser.add_argument("--length-penalty", choices=("gnmt", "average", "none"),
                        help="how finished hypotheses are ranked: gnmt, log P / ((5 + length) "
                        "/ 6) ** alpha (Wu et al. 2016); average, log P / length; none, log P "
                        "(default: the run's decode.length_penalty)")
    parser.add_argument("--beta", type=number_from(0, BETA_MAX), metavar="B",
                        help="GNMT coverage penalty beta * sum_i log(min(sum_j a_ji, 1)) added "
                        "to each finished hypothesis's score (Wu et al. 2016, eq. 14), from 0 "
                        f"(off) to {BETA_MAX:g} (default: the run's decode.beta)")
    parser.add_argument("--replace-unk", action="store_true",
                        help="replace each <unk> of a translation (n-best included) by the "
                        "source word, character or piece it attends to most (Luong et al. "
                        "2015); with sentencepiece an <unk> piece stands for characters the "
                        "vocabulary cannot spell")
    parser.add_argument("--dictionary", metavar="FILE",
                        help="with --replace-unk: 'source target' lines; a copied source word "
                        "with an entry becomes its translation")
    add_batch_size(parser)
    parser.add_argument("--quantize", choices=("int8",),
                        help="int8: run the model's linear and recurrent layers in 8-bit "
                        "integers (dynamic quantization, CPU only; see the README's decoding "
                        "figures for its speed and BLEU)")


def load_for_decoding(args: argparse.Namespace):
    """The run of --run/--checkpoint on --device (an ensemble for several --run), quantized as
    --quantize asks (on the CPU: --device auto means cpu then), with the decode settings of
    the flags (args.decode) and the unknown-word replacement checked."""
    from attnlab.translation.run import TranslationRun

    device = "cpu" if args.quantize and args.device == "auto" else args.device
    trained = TranslationRun.load(args.run, args.checkpoint,
                                  device=device).quantized(args.quantize)
    args.decode = trained.decode_settings(
        beam=args.beam, n_best=getattr(args, "nbest", None), alpha=args.alpha,
        batch_size=args.batch_size, beta=args.beta, length_penalty=args.length_penalty)
    unknown = trained.unknown_words(args.replace_unk, args.dictionary)
    args.dictionary = None if unknown is None else unknown.dictionary  # read once, here
    return trained


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "translate", help="translate text with a trained run",
        description="Translate stdin (or --input) line by line: line i of the output is the "
        "translation of input line i, and an empty line stays empty. From a terminal each line "
        "is answered as soon as it is typed, at a '> ' prompt with line editing and history "
        f"({HISTORY}; Ctrl-D ends); otherwise lines are decoded in length-sorted batches.")
    add_run_arguments(parser, several=True)
    add_decode_arguments(parser)
    parser.add_argument("--input", metavar="FILE", help="input file, UTF-8 (default: stdin)")
    parser.add_argument("--output", metavar="FILE",
                        help="output file, written whole when the input is done, so a failed "
                        "or interrupted run leaves the old FILE (default: stdout, line by line)")
    parser.add_argument("--alignments", metavar="FILE",
                        help="also write one alignment line per input line to FILE (whole, at "
                        "the end; of the best hypothesis with --nbest)")
    parser.add_argument("--nbest", type=beam_size, metavar="K",
                        help="the K best translations of each line (K at most the beam), in "
                        "Moses n-best form 'i ||| translation ||| score' (i: the input line, "
                        "from 0; score: length-normalised log-probability), best first")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text: --alignments as Pharaoh lines of 0-based 'source-target' "
                        "links, each target word to its most attended source word (characters "
                        "for a character-level run), --nbest as Moses lines; json: one object a "
                        "line, on the output its line, source, translation, score and log_prob "
                        "(with --nbest its hypotheses too), for --alignments pieces, words, "
                        "both attention matrices and score (default text)")
    parser.add_argument("--member-attention", action="store_true",
                        help="with several --run and --alignments --format json: each record "
                        "also holds every member's own piece attention (member_attention, in "
                        "--run order) beside their mean")
    parser.add_argument("--interactive", action="store_true",
                        help="answer each line at once even when stdin is not a terminal")
    add_quiet(parser)
    parser.set_defaults(func=run)


def read_lines(stream: BinaryIO, name: str) -> Iterator[str]:
    """Lines of a binary stream as text, read lazily; invalid UTF-8 is a DataError naming the
    line (the decoding is the corpus reader's, so messages look the same)."""
    from attnlab.data.corpus import decode_line

    for number, raw in enumerate(stream, start=1):
        yield decode_line(raw, name, number)


def prompt_lines(prompt: str = "> ") -> Iterator[str]:
    """Lines typed at a terminal after `prompt`, with line editing and a history kept in
    ~/.attnlab_history (when Python has readline; a history that cannot be read or written is
    no error). Ctrl-D ends the input."""
    readline: ModuleType | None
    try:
        import readline
    except ImportError:  # Python built without it: plain input()
        readline = None
    history = os.path.expanduser(HISTORY)
    if readline is not None:
        with contextlib.suppress(OSError):
            readline.read_history_file(history)
        readline.set_history_length(1000)
    try:
        for number in range(1, sys.maxsize):
            try:
                yield input(prompt)
            except EOFError:
                print()  # leave the terminal on a fresh line after the prompt
                return
            except UnicodeDecodeError:
                raise DataError(f"<stdin> line {number}: invalid UTF-8") from None
    finally:
        if readline is not None:
            with contextlib.suppress(OSError):
                readline.write_history_file(history)


def count_lines(path: str) -> int:
    """Lines of a file as read_lines yields them (a last line without "\\n" counts)."""
    count, last = 0, b"\n"
    with open(path, "rb") as file:
        while chunk := file.read(1 << 20):
            count, last = count + chunk.count(b"\n"), chunk[-1:]
    return count + (last != b"\n")


def _standard_input() -> int | None:
    """The descriptor standard input reads, when it has one (not under a test's replacement)."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def run(args: argparse.Namespace) -> int:
    from attnlab.files import atomic_output
    from attnlab.train.progress import progress_bar, wanted

    check_runs(args.run, args.checkpoint, "translate")
    if args.input is not None and Path(args.input).is_dir():
        raise DataError(f"--input {args.input} is a folder, not a file")
    if args.input is not None and not Path(args.input).exists():
        raise DataError(f"input file not found: {args.input}")
    inputs = ({"--input": args.input} if args.input is not None
              else {"standard input": _standard_input()})
    check_outputs(inputs, {"--output": args.output, "--alignments": args.alignments})
    if args.member_attention and not (args.alignments and args.format == "json"
                                      and len(args.run) > 1):
        raise UserError("--member-attention puts each member's attention into the records of "
                        "--alignments FILE --format json, with several --run")
    trained = load_for_decoding(args)
    if args.alignments and not trained.has_attention:
        raise DataError("this model has no attention, so it cannot write --alignments")
    terminal = args.input is None and _is_terminal(sys.stdin)
    interactive = args.interactive or terminal
    # A bar only while a file is written: a terminal or a pipe on stdout shows the lines.
    show = bool(args.output) and not interactive and not args.quiet
    total = count_lines(args.input) if args.input is not None and wanted(show) else None
    bar = progress_bar(total, "translating", enabled=show, unit="line")
    with contextlib.ExitStack() as stack:
        stack.enter_context(bar)
        source = (stack.enter_context(open(args.input, "rb")) if args.input
                  else sys.stdin.buffer)
        lines = (prompt_lines() if terminal and _is_terminal(sys.stdout)
                 else read_lines(source, args.input or "<stdin>"))
        # Files are written whole at the end (an interrupted run leaves the old one); stdout
        # streams, one flushed line per answer.
        output = stack.enter_context(atomic_output(args.output)) if args.output else sys.stdout
        alignments = (stack.enter_context(atomic_output(args.alignments)) if args.alignments
                      else None)
        try:
            _translate(trained, args, lines, output, alignments,
                       pool_size=1 if interactive else None, tick=bar.update)
        except BrokenPipeError:  # the reader went away (| head): stop quietly, like cat
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _translate(trained, args, lines: Iterator[str], output: IO[str],
               alignments: IO[str] | None, pool_size: int | None, tick) -> None:
    """Write each translation (or n-best list, and alignment line) as soon as its pool is
    decoded."""
    from attnlab.translation.alignment import argmax_links, links_line
    from attnlab.translation.records import alignment_record

    pending: deque[str] = deque()  # lines read but not yet answered, oldest first

    def remember() -> Iterator[str]:
        for line in lines:
            pending.append(line)
            yield line

    found = trained.stream(remember(), args.decode, replace_unk=args.replace_unk,
                           dictionary=args.dictionary, member_attention=args.member_attention,
                           pool_size=pool_size, tick=tick)
    for number, result in enumerate(found, start=1):
        source = pending.popleft()
        output.write(_answer(number, source, result, args) + "\n")
        if output is sys.stdout:
            output.flush()
        if alignments is None:
            continue
        if args.format == "json":
            record = alignment_record(number, source, result,
                                      characters=trained.character_level)
            alignments.write(json_line(record) + "\n")
        else:
            links = argmax_links(result, trained.character_level)
            alignments.write(links_line(links) + "\n")


def json_line(record: dict) -> str:
    """`record` as one line of JSON; a NaN or infinity (which json.dumps would write as the
    NaN or Infinity that JSON has not) is a ValueError, not a line no JSON reader reads."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False)


def _answer(number: int, source: str, result, args: argparse.Namespace) -> str:
    """The output for input line `number` (from 1): its translation, or with --nbest its
    hypotheses as Moses n-best lines; with --format json one JSON object either way."""
    if args.format == "json":
        answer = {"line": number, "source": source, "translation": result.text,
                  "score": result.score, "log_prob": result.log_prob}
        if args.nbest is not None:
            answer["hypotheses"] = [{"translation": found.text, "score": found.score,
                                     "log_prob": found.log_prob} for found in result.hypotheses]
        return json_line(answer)
    if args.nbest is None:
        return result.text
    return "\n".join(f"{number - 1} ||| {found.text} ||| {found.score:.4f}"
                     for found in result.hypotheses)
