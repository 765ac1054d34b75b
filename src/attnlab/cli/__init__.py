"""The `attnlab` command: parses arguments and calls library functions, nothing more.

Each sub-command group lives in its own module with an `add_parser(subparsers)` function that
registers it and sets `func` (called with the parsed arguments, returns an exit code).
"""

from __future__ import annotations

import argparse
import logging
import sys

from attnlab.errors import UserError

from . import caption, compare, data, demo, evaluate, lm, plot, report, serve, train, translate

COMMAND_GROUPS = (demo, train, data, translate, evaluate, plot, report, lm, caption, compare,
                  serve)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attnlab", description="Train, compare and see attention mechanisms."
    )
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an unexpected error (anywhere on the "
                        "command line)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.add_parser(subparsers)
    return parser


# Other spellings of a command: `attnlab plot self-attention ...` is `attnlab lm plot ...`.
ALIASES = {("plot", "self-attention"): ["lm", "plot"]}


def expand_aliases(argv: list[str]) -> list[str]:
    for prefix, command in ALIASES.items():
        if tuple(argv[: len(prefix)]) == prefix:
            return [*command, *argv[len(prefix):]]
    return argv


def main(argv: list[str] | None = None) -> int:
    argv = expand_aliases(sys.argv[1:] if argv is None else list(argv))
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
        if debug:
            raise
        print(f"attnlab: error: {unexpected(error)}; run with --debug for the traceback",
              file=sys.stderr)
        return 1


def unexpected(error: BaseException) -> str:
    """One line for an error nobody wrote a message for: its type and first line."""
    lines = str(error).strip().splitlines()
    return f"unexpected {type(error).__name__}" + (f": {lines[0]}" if lines else "")


if __name__ == "__main__":
    sys.exit(main())
