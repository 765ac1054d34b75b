"""`attnlab caption predict` (the task's own verb) and `attnlab data shapes`."""

from __future__ import annotations

import argparse

from attnlab.files import atomic_output, check_output_path

from .options import (
    add_beam,
    add_hard_decoding,
    add_output,
    add_run_arguments,
    check_task,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "caption", help="image captioning with soft/hard attention (Show, Attend and Tell)",
        description="Image captioning with soft or hard attention over a CNN's feature grid "
        "(Xu et al. 2015): caption images (predict). Training, scoring a split and drawing "
        "where each word looks are attnlab train, evaluate and plot.")
    commands = parser.add_subparsers(dest="caption_command", required=True, metavar="COMMAND")

    predict = commands.add_parser(
        "predict", help="caption images (beam search)",
        description="Caption each IMAGE with beam search: one 'IMAGE<tab>caption' line each.")
    add_run_arguments(predict, what="run directory of a trained captioner")
    add_beam(predict)
    add_hard_decoding(predict)
    predict.add_argument("images", nargs="+", metavar="IMAGE", help="image files")
    add_output(predict, "write the caption lines to FILE (whole, at the end) instead of stdout")
    predict.set_defaults(func=run_predict)


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


def run_predict(args: argparse.Namespace) -> int:
    from attnlab.recipes import load
    from attnlab.train.capabilities import Captions

    check_task(args.run, args.checkpoint, "caption predict")
    if args.output:
        check_output_path(args.output)  # before the model is loaded and run
    trained = load(args.run, checkpoint=args.checkpoint, device=args.device)
    assert isinstance(trained, Captions)  # check_task refused the runs of other tasks
    captioned = trained.caption(args.images, beam=args.beam,
                                hard_attention=args.hard_decoding)
    lines = [f"{path}\t{caption.text}\n"
             for path, caption in zip(args.images, captioned, strict=True)]
    if not args.output:
        print("".join(lines), end="")
        return 0
    with atomic_output(args.output) as file:
        file.writelines(lines)
    print(f"captions: {args.output}")
    return 0
