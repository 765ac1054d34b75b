"""`attnlab train CONFIG`: train a model of any task from a YAML file or a shipped config; the
config's `task:` key (translation by default) chooses the recipe, through attnlab.recipes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import cast

from .options import Once, add_quiet


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train", help="train a model (translation, captioning, language model) from a YAML "
        "config",
        description="Train the model a YAML config describes; its task: key says which task "
        "(translation, the default; captioning; lm). Checkpoints (best, last), vocabularies, "
        "the config and TensorBoard logs go to the run directory.")
    add_train_arguments(parser)
    parser.set_defaults(func=run)


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    """CONFIG, --run, --set, --resume, --overwrite, --quiet."""
    parser.add_argument("config", nargs="?", metavar="CONFIG",
                        help="a YAML config file, or the name of a shipped config (attnlab "
                        "config list); optional with --resume")
    # --run-dir too: torchrun reads a bare --run as its own --run-path
    parser.add_argument("--run", "--run-dir", dest="run", metavar="DIR", action=Once,
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
    """The config (a YAML file, a shipped config's name, or the run's own when resuming), its
    task's record, then attnlab.train.run_experiment(record.task_class, config, run_dir)."""
    from attnlab.configs import config_file
    from attnlab.recipes import DEFAULT_TASK, RECIPES, recipe_of_config, recipe_of_run
    from attnlab.train import experiment_config, run_experiment

    if args.config is None and args.run is None:
        raise SystemExit("attnlab train: give CONFIG (a YAML file or a shipped config's name), "
                         "or --run DIR with --resume")
    path = None if args.config is None else str(config_file(args.config))
    # without --run there is a config (checked above)
    run_dir = args.run or str(Path("runs") / Path(cast(str, path)).stem)
    if path is not None:
        recipe = recipe_of_config(path, args.overrides)
    elif args.resume and Path(run_dir).exists():
        recipe = recipe_of_run(run_dir, "last")
    else:
        recipe = RECIPES[DEFAULT_TASK]  # experiment_config says what is missing
    config = experiment_config(recipe.config_class, path, run_dir, args.overrides, args.resume)
    result = run_experiment(recipe.task_class, config, run_dir, resume=args.resume,
                            overwrite=args.overwrite, progress=not args.quiet)
    print(f"stopped after {result.steps} steps ({result.stopped_by}); run directory: {run_dir}")
    return 0

