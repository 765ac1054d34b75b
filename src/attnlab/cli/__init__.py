"""The `attnlab` command: parses arguments and calls library functions, nothing more.

Each sub-command group lives in its own module with an `add_parser(subparsers)` function that
registers it and sets `func` (called with the parsed arguments, returns an exit code). The
flags that commands reading a trained run share are written once, in options.py.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import logging
import os
import select
import sys

from attnlab.errors import UserError
from attnlab.version import __version__

from . import (
    align,
    average,
    caption,
    compare,
    config,
    data,
    demo,
    evaluate,
    explain,
    export,
    lm,
    plot,
    report,
    serve,
    train,
    translate,
)

COMMAND_GROUPS = (demo, train, data, translate, evaluate, plot, explain, report, lm, caption,
                  compare, serve, export, average, align, config)


class SubCommands(argparse._SubParsersAction):
    """Sub-commands whose parser, when given no description, describes itself with its help
    line (so `attnlab X --help` always says what X does)."""

    def add_parser(self, name, **kwargs):
        if kwargs.get("description") is None and kwargs.get("help"):
            help_line = kwargs["help"]
            kwargs["description"] = help_line[0].upper() + help_line[1:] + "."
        return super().add_parser(name, **kwargs)


class Parser(argparse.ArgumentParser):
    """argparse, with a misspelt command or choice answered in one line with the closest one:
    "attnlab: error: unknown command 'tranlsate'; did you mean 'translate'?" (exit 2)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", SubCommands)
        self._one_line_error = False

    def _check_value(self, action, value):
        if action.choices is None or value in action.choices:
            return
        choices = [str(choice) for choice in action.choices]
        close = difflib.get_close_matches(str(value), choices, n=1)
        hint = (f"did you mean {close[0]!r}?" if close
                else f"choose from {', '.join(map(repr, choices))}")
        self._one_line_error = True
        if isinstance(action, argparse._SubParsersAction):
            raise argparse.ArgumentError(None, f"unknown command {value!r}; {hint}")
        raise argparse.ArgumentError(action, f"invalid choice {value!r}; {hint}")

    def _get_value(self, action, text):
        try:
            return super()._get_value(action, text)
        except argparse.ArgumentError:
            # a value its type refused ("--beta: must be from 0 to 10"): the sentence says it
            self._one_line_error = True
            raise

    def error(self, message):
        if not self._one_line_error:
            super().error(message)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="attnlab", description="Train, compare and see attention mechanisms.")
    parser.add_argument("--version", action="version", version=f"attnlab {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an unexpected error (anywhere on the "
                        "command line)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code. A reader that goes away (`| head`) ends any command
    quietly with 0, as `cat` does, following the Python docs' note on SIGPIPE: standard output
    then points at os.devnull, so that the flush at exit cannot fail again."""
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()  # buffered output meets the closed pipe here, or at exit
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError):  # ValueError: no file descriptor
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # --debug anywhere on the line (before or after the command) shows tracebacks.
    debug = "--debug" in argv
    args = build_parser().parse_args([a for a in argv if a != "--debug"])
    # Progress lines of runs without a terminal (log files, batch jobs) go through logging.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    try:
        return int(args.func(args) or 0)
    except UserError as error:
        print(f"attnlab: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("attnlab: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print("attnlab: error: out of memory; use a smaller batch (--batch-size), shorter "
              "inputs or a machine with more memory", file=sys.stderr)
        return 1
    except Exception as error:  # the last fallback: a bug, or a case without its own message
        if debug or (isinstance(error, BrokenPipeError) and reader_gone(sys.stdout)):
            raise
        print(f"attnlab: error: {unexpected(error)}; run with --debug for the traceback",
              file=sys.stderr)
        return 1


def reader_gone(stream) -> bool:
    """Whether `stream` is a pipe or socket whose reader has closed it (poll reports an error or
    a hang-up), so that a BrokenPipeError is that reader leaving and not another pipe's bug.
    True where poll is missing (Windows): a closed pipe is then the likely cause."""
    if not hasattr(select, "poll"):
        return True
    try:
        poller = select.poll()
        poller.register(stream.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError):  # no file descriptor (a test's capture): not a closed pipe
        return False


def unexpected(error: BaseException) -> str:
    """One line for an error nobody wrote a message for: its type and first line."""
    lines = str(error).strip().splitlines()
    return f"unexpected {type(error).__name__}" + (f": {lines[0]}" if lines else "")


if __name__ == "__main__":
    sys.exit(main())
