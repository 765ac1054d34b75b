"""`attnlab lm plot`: the LSTMN's reading figure of a language model or of a translation model with
an LSTMN encoder (`attnlab plot` of a translation run draws its translation's attention)."""

from __future__ import annotations

import argparse

from attnlab.errors import UserError
from attnlab.files import check_output_path

from .options import (
    add_output,
    add_run_arguments,
    plot_path,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lm", help="the LSTMN's self-attention (of a language model or an LSTMN encoder)",
        description="The reading figure of an LSTMN (Cheng et al. 2016): of a language model, "
        "or of the encoder of a translation model. Training and perplexity are attnlab train "
        "and attnlab evaluate.")
    commands = parser.add_subparsers(dest="lm_command", required=True, metavar="COMMAND")

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
    parser.add_argument("--layer", type=int, metavar="L",
                        help="layer to show, from 1 (default: the top one)")


def run_plot(args: argparse.Namespace) -> int:
    """A language-model run, or a translation run with an LSTMN encoder (its meta.json says)."""
    from attnlab.lm.figure import plot_reading_to
    from attnlab.recipes import load, recipe_of_run
    from attnlab.train.capabilities import Reads

    recipe = recipe_of_run(args.run, args.checkpoint)
    if not issubclass(recipe.run_class, Reads):
        raise UserError(f"{args.run} holds {recipe.run_class.kind}; expected a language model "
                        f"or a translation model with an LSTMN encoder")
    output = plot_path(args.output, args.run, "self-attention.png")
    for path in (output, args.matrix):
        if path is not None:
            check_output_path(path)  # before the model is loaded
    reader = load(args.run, checkpoint=args.checkpoint, device=args.device)
    assert isinstance(reader, Reads)  # its class was checked above
    reading = reader.read(args.sentence)
    figure, matrix = plot_reading_to(reading, args.run, output, args.matrix, args.layer)
    print(f"reading figure: {figure}\nweight matrix: {matrix}")
    return 0
