"""`attnlab serve --run DIR [--run NAME=DIR ...]`: the attention explorer in one process.

Every run is loaded before the server starts, so a missing or bad run directory is one sentence
and no server; then the port is bound (a port in use is one sentence and no server), and only
then does it say it serves. The server binds 127.0.0.1 unless --host says otherwise (another
address gets one warning line), and answers only requests that name it by a loopback name, its
address or an --allowed-host.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from attnlab.errors import ConfigError

from .options import add_device, number_from, positive_int

# --option -> the Limits field it sets, with its help. Limits refuses a value that is not
# positive in one sentence; the types refuse NaN, infinity and sizes past a float's range.
LIMIT_OPTIONS = {
    "--max-tokens": ("max_tokens", int, "source pieces of one text (default 200)"),
    "--max-upload-mb": ("max_upload_bytes", number_from(most=1024 * 1024), "size of any request "
                        "body, uploaded images included, in MiB, at most 1 TiB (default 5)"),
    "--max-pixels": ("max_pixels", int, "width x height of an uploaded image (default "
                     "25,000,000)"),
    "--max-beam": ("max_beam", int, "largest beam a request may ask for (default 16)"),
    "--queue-size": ("queue_size", int, "requests waiting for the model; past it the server "
                     "answers 503 (default 128)"),
    "--batch-window-ms": ("batch_window_ms", number_from(most=60_000), "how long a request "
                          "waits for others to be decoded with, at most a minute (default 5)"),
    "--max-batch": ("max_batch", int, "sentences decoded together (default 64)"),
    "--max-explain-steps": ("max_explain_steps", int, "integrated gradients' points an "
                            "explain request may ask for (default 64)"),
    "--explain-budget-s": ("explain_budget_s", number_from(most=3600), "seconds one "
                           "explanation may take, at most an hour; it holds the one worker "
                           "(default 30)"),
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve", help="the attention explorer: a web page and JSON API over trained runs",
        description="Serve trained runs (translation, captioning, LSTMN language models) on a "
        "web page that shows where each output token looked, with a JSON API (/docs). "
        "Translate requests arriving together are decoded in one batched beam search.")
    parser.add_argument("--run", action="append", required=True, metavar="[NAME=]DIR",
                        help="a run directory, named NAME on the page and in requests when "
                        "NAME= is given, else after its folder (or the folder above, for a "
                        "folder called run, model, checkpoint...: runs/demo/run is demo); "
                        "repeat for more runs")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: this machine only; 0.0.0.0: "
                        "every network interface, with a warning: there is no authentication)")
    parser.add_argument("--port", type=port_number, default=8000,
                        help="port (default 8000; 0: one the system picks, printed)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a name (or address) requests may give as their Host besides "
                        "localhost, 127.0.0.1, [::1] and the --host address, e.g. the "
                        "machine's name on the network; repeat for more. Other requests get "
                        "400 (a page on another site could otherwise read the answers)")
    parser.add_argument("--threads", type=positive_int, metavar="N",
                        help="torch threads for the models (default: torch's choice)")
    add_device(parser)
    parser.add_argument("--quantize", choices=("int8",),
                        help="int8: run the translation models' linear and recurrent layers in "
                        "8-bit integers (as translate --quantize; CPU)")
    for option, (_, kind, text) in LIMIT_OPTIONS.items():
        parser.add_argument(option, type=kind, metavar="N", help=text)
    parser.set_defaults(func=run)


def port_number(value: str) -> int:
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port (0 to 65535)")
    return int(value)


# Folder names that say what a folder holds, not which run it is (the demo trains into
# runs/demo/run): a run in one is named after the folder above it.
GENERIC_NAMES = frozenset({"run", "runs", "model", "models", "checkpoint", "checkpoints",
                           "output", "outputs", "out", "best", "last", "latest", "final",
                           "export", "exported"})


def run_name(directory: str | Path) -> str:
    """The name a run directory is served under without NAME=: its folder's name, or the
    nearest folder above's when that name is generic (runs/demo/run -> "demo"); the folder's
    own when every folder above is generic too."""
    path = Path(os.path.abspath(directory))  # as typed: a link keeps its own name
    for folder in (path, *path.parents[:2]):
        if folder.name and folder.name.lower() not in GENERIC_NAMES:
            return folder.name
    return path.name


def named_runs(values: list[str]) -> dict[str, Path]:
    """--run values -> {name: directory}: NAME=DIR, or DIR named by run_name (a directory
    whose own name holds "=" is taken whole when it exists)."""
    runs: dict[str, Path] = {}
    for value in values:
        name, separator, directory = value.partition("=")
        if not separator or Path(value).is_dir():
            name, directory = run_name(value), value
        if not name or not directory:
            raise ConfigError(f"--run {value!r}: give DIR or NAME=DIR")
        if name in runs:
            raise ConfigError(f"--run: two runs are named {name!r}; name one with "
                              f"--run NAME=DIR")
        if not Path(directory).is_dir():
            raise ConfigError(f"--run {value}: run directory {directory} does not exist")
        runs[name] = Path(directory)
    return runs


def limits_from(args: argparse.Namespace):
    from attnlab.serve import Limits

    given = {}
    for option, (field, _, _) in LIMIT_OPTIONS.items():
        value = getattr(args, option.removeprefix("--").replace("-", "_"))
        if value is not None:
            given[field] = round(value * 1024 * 1024) if field == "max_upload_bytes" else value
    return Limits(**given)


def run(args: argparse.Namespace) -> int:
    import torch

    from attnlab.serve import create_app, listen
    from attnlab.serve.hosts import allowed_names

    runs = named_runs(args.run)
    limits = limits_from(args)
    names = allowed_names(args.host, args.allowed_host)
    if args.threads:
        torch.set_num_threads(args.threads)
    # Loads every run: a bad one stops here, before the port is bound.
    app = create_app(runs, limits, quantize=args.quantize, allowed_hosts=names,
                     device=args.device)
    sock = listen.bind(args.host, args.port)  # a port in use stops here, before "serving"
    warning = listen.exposure_warning(sock, names)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    print(f"attnlab serve: serving {', '.join(runs)} on {listen.url(sock)} (API docs: /docs)",
          flush=True)
    # One process; the app logs one line per request itself (logger attnlab.serve).
    listen.serve(app, sock)
    return 0
