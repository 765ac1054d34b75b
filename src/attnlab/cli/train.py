"""`attnlab train CONFIG`: train a translation model from a YAML file or a shipped config."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .options import add_quiet

if TYPE_CHECKING:
    from attnlab.train.config import ExperimentConfig


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train", help="train a translation model from a YAML config",
        description="Train a translation model. Checkpoints (best, last), vocabularies, the "
        "config and TensorBoard logs go to the run directory.")
    add_train_arguments(parser)
    parser.set_defaults(func=run)


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    """CONFIG, --run, --set, --resume, --overwrite, --quiet: shared by every `... train`
    command."""
    parser.add_argument("config", nargs="?", metavar="CONFIG",
                        help="a YAML config file, or the name of a shipped config (attnlab "
                        "config list); optional with --resume")
    # --run-dir too: torchrun reads a bare --run as its own --run-path
    parser.add_argument("--run", "--run-dir", dest="run", metavar="DIR",
                        help="run directory (default: runs/<config name>); under torchrun, "
                        "spell it --run-dir")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a config value, e.g. train.lr=5e-4")
    existing = parser.add_mutually_exclusive_group()
    existing.add_argument("--resume", action="store_true",
                          help="continue from the run directory's last checkpoint")
    existing.add_argument("--overwrite", action="store_true",
                          help="replace the run already in the run directory (its checkpoints, "
                          "config, vocabularies, metrics and TensorBoard logs)")
    add_quiet(parser)


def run(args: argparse.Namespace) -> int:
    from attnlab.translation import RunConfig, TranslationTask

    return run_training(args, "attnlab train", RunConfig, TranslationTask)


def run_training(args: argparse.Namespace, command: str, config_cls: type[ExperimentConfig],
                 task_class) -> int:
    """The body of every `... train` command: the config (a YAML file, a shipped config's name,
    or the run's own when resuming), then attnlab.train.run_experiment(task_class, config,
    run_dir)."""
    from attnlab.configs import config_file
    from attnlab.train import experiment_config, run_experiment

    if args.config is None and args.run is None:
        raise SystemExit(f"{command}: give CONFIG (a YAML file or a shipped config's name), or "
                         f"--run DIR with --resume")
    path = None if args.config is None else str(config_file(args.config))
    # without --run there is a config (checked above)
    run_dir = args.run or str(Path("runs") / Path(cast(str, path)).stem)
    config = experiment_config(config_cls, path, run_dir, args.overrides, args.resume)
    result = run_experiment(task_class, config, run_dir, resume=args.resume,
                            overwrite=args.overwrite, progress=not args.quiet)
    print(f"stopped after {result.steps} steps ({result.stopped_by}); run directory: {run_dir}")
    return 0
