"""`attnlab lm {train,evaluate,plot}`: language models and the LSTMN's reading figure."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from attnlab.errors import UserError
from attnlab.files import atomic_output, check_output_path

from .options import (
    add_batch_size,
    add_output,
    add_quiet,
    add_run_arguments,
    check_task,
    plot_path,
)
from .train import add_train_arguments, run_training

# The runs `lm plot` reads: language models, and translation models with an LSTMN encoder.
READ_TASKS = ("lm", "translation")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lm", help="train and evaluate language models (LSTMN or LSTM); plot self-attention",
        description="Language models: an LSTMN (Cheng et al. 2016) or a plain LSTM trained on "
        "text, their perplexity, and the LSTMN's reading figure.")
    commands = parser.add_subparsers(dest="lm_command", required=True, metavar="COMMAND")

    train = commands.add_parser(
        "train", help="train a language model from a YAML config",
        description="Train next-word prediction on a text file (one sentence a line). "
        "Checkpoints (best, last), the vocabulary, the config and TensorBoard logs go to the "
        "run directory.")
    add_train_arguments(train)
    train.set_defaults(func=run_train)

    evaluate = commands.add_parser(
        "evaluate", help="perplexity of a trained language model on a text file",
        description="Per-token perplexity of a language-model run on a text file (one sentence "
        "a line; every sentence's </s> counts), with the run's vocabulary.")
    add_run_arguments(evaluate)
    evaluate.add_argument("--text", metavar="FILE", help="text file, one sentence a line, plain "
                          "or .gz (default: the run's data.test)")
    add_batch_size(evaluate, default="the run's data.batch_size")
    add_output(evaluate, "also write the result to FILE as JSON")
    add_quiet(evaluate)
    evaluate.set_defaults(func=run_evaluate)

    plot = commands.add_parser(
        "plot", help="the LSTMN reading figure of a sentence and its weight matrix",
        description="One line per step: the current word in red, earlier words shaded in blue "
        "by their attention weight; and the step x step weight matrix. DIR is a language "
        "model or a translation model with an LSTMN encoder. The figures go to DIR/plots/ "
        "unless --output says otherwise; the paths written are printed.")
    add_plot_arguments(plot)
    plot.set_defaults(func=run_plot)


def add_plot_arguments(parser: argparse.ArgumentParser) -> None:
    """The self-attention figure's arguments; reusable by another command group."""
    add_run_arguments(parser)
    parser.add_argument("sentence", metavar="SENTENCE", help="the sentence to read")
    add_output(parser, "reading figure, .png, .svg or .pdf (default: "
               "DIR/plots/self-attention.png)")
    parser.add_argument("--matrix", metavar="FILE",
                        help="weight matrix (default: the --output file's name with -matrix)")
    parser.add_argument("--layer", type=int, default=-1, metavar="L",
                        help="layer to show, from 0 (default: the top one)")


def run_train(args: argparse.Namespace) -> int:
    from attnlab.lm import LanguageModelTask, LMRunConfig

    return run_training(args, "attnlab lm train", LMRunConfig, LanguageModelTask)


def run_evaluate(args: argparse.Namespace) -> int:
    from attnlab.lm.evaluate import evaluate_perplexity

    check_task(args.run, args.checkpoint, "lm evaluate", ("lm",))
    if args.output:
        check_output_path(args.output)  # before the model is loaded and run
    result = evaluate_perplexity(args.run, args.text, checkpoint=args.checkpoint,
                                 batch_size=args.batch_size, device=args.device,
                                 progress=not args.quiet)
    print(result.summary())
    if args.output:
        with atomic_output(args.output) as file:
            file.write(json.dumps(asdict(result), indent=1) + "\n")
        print(f"result: {args.output}")
    return 0


def run_plot(args: argparse.Namespace) -> int:
    """A language-model run, or a translation run with an LSTMN encoder (its meta.json says)."""
    from attnlab.lm import plot_reading_to
    from attnlab.lm import read_run as read_language_model_run
    from attnlab.train import run_task
    from attnlab.translation.reading import read_run as read_translation_run

    check_task(args.run, args.checkpoint, "lm plot", READ_TASKS)
    output = plot_path(args.output, args.run, "self-attention.png")
    for path in (output, args.matrix):
        if path is not None:
            check_output_path(path)  # before the model is loaded
    readers = {"translation": read_translation_run, "lm": read_language_model_run}
    task = run_task(args.run, args.checkpoint)
    if task not in readers:
        raise UserError(f"{args.run} holds a {task!r} model; expected a language model or a "
                        f"translation model with an LSTMN encoder")
    reading = readers[task](args.run, args.sentence, args.checkpoint, args.device)
    figure, matrix = plot_reading_to(reading, args.run, output, args.matrix, args.layer)
    print(f"reading figure: {figure}\nweight matrix: {matrix}")
    return 0
