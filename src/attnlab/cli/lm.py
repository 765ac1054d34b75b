"""`attnlab lm {train,evaluate,plot}`: language models and the LSTMN's reading figure."""

from __future__ import annotations

import argparse

from attnlab.errors import UserError
from attnlab.files import check_output_path

from .train import add_train_arguments, run_training


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lm", help="train and evaluate language models (LSTMN or LSTM); plot self-attention")
    commands = parser.add_subparsers(dest="lm_command", required=True, metavar="COMMAND")

    train = commands.add_parser(
        "train", help="train a language model from a YAML config",
        description="Train next-word prediction on a text file (one sentence a line). "
        "Checkpoints (best, last), the vocabulary, the config and TensorBoard logs go to the "
        "run directory.")
    add_train_arguments(train)
    train.set_defaults(func=run_train)

    evaluate = commands.add_parser(
        "evaluate", help="perplexity of a trained language model on a text file")
    evaluate.add_argument("--run", required=True, help="run directory")
    evaluate.add_argument("--text", help="text file, one sentence a line (default: the run's "
                          "data.test)")
    evaluate.add_argument("--checkpoint", help="best or last (default: best if the run has it)")
    evaluate.add_argument("--batch-size", type=int, default=64, help="sentences per batch")
    evaluate.set_defaults(func=run_evaluate)

    plot = commands.add_parser(
        "plot", help="the LSTMN reading figure of a sentence and its weight matrix",
        description="One line per step: the current word in red, earlier words shaded in blue "
        "by their attention weight; and the step x step weight matrix. RUN is a language "
        "model or a translation model with an LSTMN encoder.")
    add_plot_arguments(plot)
    plot.set_defaults(func=run_plot)


def add_plot_arguments(parser: argparse.ArgumentParser) -> None:
    """The self-attention figure's arguments; reusable by another command group."""
    parser.add_argument("--run", required=True, help="run directory")
    parser.add_argument("sentence", help="the sentence to read")
    parser.add_argument("--output", help="reading figure (default: RUN/self-attention.png)")
    parser.add_argument("--matrix", help="weight matrix (default: OUTPUT with -matrix)")
    parser.add_argument("--layer", type=int, default=-1, help="layer to show (default: top)")
    parser.add_argument("--checkpoint", help="best or last (default: best if the run has it)")


def run_train(args: argparse.Namespace) -> int:
    from attnlab.lm import LanguageModelTask, LMRunConfig

    return run_training(args, "attnlab lm train", LMRunConfig, LanguageModelTask)


def run_evaluate(args: argparse.Namespace) -> int:
    from attnlab.lm.evaluate import evaluate_perplexity

    result = evaluate_perplexity(args.run, args.text, checkpoint=args.checkpoint,
                                 batch_size=args.batch_size)
    print(result.summary())
    return 0


def run_plot(args: argparse.Namespace) -> int:
    """A language-model run, or a translation run with an LSTMN encoder (its meta.json says)."""
    from attnlab.lm import plot_reading_to
    from attnlab.lm import read_run as read_language_model_run
    from attnlab.train import run_task
    from attnlab.translation.reading import read_run as read_translation_run

    for path in (args.output, args.matrix):
        if path is not None:
            check_output_path(path)  # before the model is loaded
    readers = {"translation": read_translation_run, "language_model": read_language_model_run}
    task = run_task(args.run, args.checkpoint)
    if task not in readers:
        raise UserError(f"{args.run} holds a {task!r} model; expected a language model or a "
                        f"translation model with an LSTMN encoder")
    reading = readers[task](args.run, args.sentence, args.checkpoint)
    figure, matrix = plot_reading_to(reading, args.run, args.output, args.matrix, args.layer)
    print(f"wrote {figure} and {matrix}")
    return 0
