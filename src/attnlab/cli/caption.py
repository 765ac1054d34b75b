"""`attnlab caption {train,predict,evaluate,plot}` and `attnlab data shapes`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from attnlab.files import atomic_output, check_output_path

from .options import (
    add_batch_size,
    add_beam,
    add_output,
    add_quiet,
    add_run_arguments,
    check_task,
    plot_path,
    positive_int,
)
from .train import add_train_arguments, run_training

TASK = ("captioning",)  # the runs these commands read


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "caption", help="image captioning with soft/hard attention (Show, Attend and Tell)",
        description="Image captioning with soft or hard attention over a CNN's feature grid "
        "(Xu et al. 2015): train, caption images, score a split, draw where each word looks.")
    commands = parser.add_subparsers(dest="caption_command", required=True, metavar="COMMAND")

    train = commands.add_parser(
        "train", help="train a captioner from a YAML config",
        description="Train a captioner. Checkpoints (best, last), the vocabulary, the config "
        "and TensorBoard logs go to the run directory.")
    add_train_arguments(train)
    train.set_defaults(func=run_train)

    predict = commands.add_parser(
        "predict", help="caption images (beam search)",
        description="Caption each IMAGE with beam search: one 'IMAGE<tab>caption' line each.")
    _add_run_options(predict)
    predict.add_argument("images", nargs="+", metavar="IMAGE", help="image files")
    add_output(predict, "write the caption lines to FILE (whole, at the end) instead of stdout")
    predict.set_defaults(func=run_predict)

    evaluate = commands.add_parser(
        "evaluate", help="BLEU-1..4 against all references (and localisation on shapes)",
        description="Caption a split's images and score them: BLEU-1..4 against all their "
        "references and, on the shapes data, the share of attention inside the box of the "
        "object being named.")
    _add_run_options(evaluate)
    evaluate.add_argument("--split", metavar="NAME",
                          help="split to score (default: the config's test split)")
    evaluate.add_argument("--limit", type=positive_int, metavar="N",
                          help="score only the first N images")
    add_batch_size(evaluate, "images")
    add_output(evaluate, "also write the metrics to FILE as JSON")
    add_quiet(evaluate)
    evaluate.set_defaults(func=run_evaluate)

    plot = commands.add_parser(
        "plot", help="draw where each generated word looked",
        description="Caption IMAGE and draw the attention of every word over the image (hard "
        "attention: the most likely location marked), into DIR/plots/ unless --output says "
        "otherwise; the path written is printed.")
    _add_run_options(plot)
    plot.add_argument("image", metavar="IMAGE", help="an image file")
    add_output(plot, "figure file, .png, .svg or .pdf (default: DIR/plots/IMAGE-attention.png, "
               "IMAGE's name without its suffix)")
    plot.set_defaults(func=run_plot)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, what="run directory of a trained captioner")
    add_beam(parser)
    parser.add_argument("--hard-decoding", choices=["expectation", "argmax"],
                        help="hard-attention models: read the soft expectation or only the most "
                        "likely location (default: the config's decode.hard_attention)")


def add_shapes_parser(datasets: argparse._SubParsersAction) -> None:
    """`attnlab data shapes`: registered by cli/data.py next to the other datasets."""
    shapes = datasets.add_parser(
        "shapes", help="generate the shapes captioning dataset (Karpathy JSON + PNG images)",
        description="Write images/NNNNNN.png and dataset_shapes.json (Karpathy-split format, "
        "with each object's box) into --dest.")
    shapes.add_argument("--dest", required=True, help="output directory")
    shapes.add_argument("--size", type=int, default=6000, help="images in all (default 6000)")
    shapes.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    shapes.add_argument("--image-size", type=int, default=64,
                        help="canvas side in pixels (default 64)")
    shapes.set_defaults(func=run_shapes)


def run_shapes(args: argparse.Namespace) -> int:
    from attnlab.captioning.shapes import write_shapes

    counts = write_shapes(args.dest, size=args.size, seed=args.seed, image_size=args.image_size)
    listed = ", ".join(f"{split} {count}" for split, count in sorted(counts.items()))
    print(f"shapes dataset (seed {args.seed}) written to {args.dest}: {listed}")
    return 0


def run_train(args: argparse.Namespace) -> int:
    from attnlab.captioning import CaptionTask, RunConfig

    return run_training(args, "attnlab caption train", RunConfig, CaptionTask)


def run_predict(args: argparse.Namespace) -> int:
    from attnlab.captioning import load_trained

    check_task(args.run, args.checkpoint, "caption predict", TASK)
    if args.output:
        check_output_path(args.output)  # before the model is loaded and run
    trained = load_trained(args.run, args.checkpoint, hard_decoding=args.hard_decoding,
                           device=args.device)
    captioned = trained.caption_files(args.images, beam=args.beam)
    lines = [f"{path}\t{caption.text}\n"
             for path, (_, caption) in zip(args.images, captioned, strict=True)]
    if not args.output:
        print("".join(lines), end="")
        return 0
    with atomic_output(args.output) as file:
        file.writelines(lines)
    print(f"captions: {args.output}")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    from attnlab.captioning import evaluate_split, load_trained

    check_task(args.run, args.checkpoint, "caption evaluate", TASK)
    if args.output:
        check_output_path(args.output)  # before minutes of decoding
    trained = load_trained(args.run, args.checkpoint, hard_decoding=args.hard_decoding,
                           device=args.device)
    metrics, signature, count = evaluate_split(trained, args.split, beam=args.beam,
                                               limit=args.limit, batch_size=args.batch_size,
                                               progress=not args.quiet)
    split = args.split or trained.config.data.test_split
    beam = args.beam or trained.config.decode.beam
    hard = trained.config.model.decoder.attention.hard
    reading = f", hard attention read as {trained.config.decode.hard_attention}" if hard else ""
    print(f"{split}: {count} images, beam {beam}{reading}")
    for order in range(1, 5):
        print(f"BLEU-{order}  {metrics[f'bleu{order}']:6.2f}")
    print(f"  ({signature})")
    if "localisation" in metrics:
        print(f"localisation  {metrics['localisation']:6.2f}  % of attention inside the named "
              f"object's box while its colour and shape words are produced")
        print(f"chance        {metrics['localisation_chance']:6.2f}  % of the image those boxes "
              f"cover (what uniform attention scores)")
        print(f"unmatched     {metrics['unmatched_mentions']:6.2f}  % of mentions naming no "
              f"object of the image (not scored)")
        print(f"words scored  {metrics['localised_words']:6.0f}")
    if args.output:
        record = {"split": split, "images": count, "beam": beam, "bleu_signature": signature,
                  **metrics}
        with atomic_output(args.output) as file:
            file.write(json.dumps(record, indent=1) + "\n")
        print(f"metrics: {args.output}")
    return 0


def run_plot(args: argparse.Namespace) -> int:
    from attnlab.captioning import load_trained, plot_caption

    check_task(args.run, args.checkpoint, "caption plot", TASK)
    output = plot_path(args.output, args.run, f"{Path(args.image).stem}-attention.png")
    check_output_path(output)  # before the model is loaded and run
    trained = load_trained(args.run, args.checkpoint, hard_decoding=args.hard_decoding,
                           device=args.device)
    caption, path = plot_caption(trained, args.image, output, beam=args.beam)
    print(f"{args.image}\t{caption.text}\nfigure: {path}")
    return 0
