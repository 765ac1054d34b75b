"""`attnlab caption {train,predict,evaluate,plot}` and `attnlab data shapes`."""

from __future__ import annotations

import argparse
import json

from attnlab.files import atomic_output, check_output_path

from .train import add_train_arguments, run_training


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "caption", help="image captioning with soft/hard attention (Show, Attend and Tell)")
    commands = parser.add_subparsers(dest="caption_command", required=True, metavar="COMMAND")

    train = commands.add_parser(
        "train", help="train a captioner from a YAML config",
        description="Train a captioner. Checkpoints (best, last), the vocabulary, the config "
        "and TensorBoard logs go to the run directory.")
    add_train_arguments(train)
    train.set_defaults(func=run_train)

    predict = commands.add_parser("predict", help="caption images (beam search)")
    _add_run_options(predict)
    predict.add_argument("images", nargs="+", metavar="IMAGE")
    predict.set_defaults(func=run_predict)

    evaluate = commands.add_parser(
        "evaluate", help="BLEU-1..4 against all references (and localisation on shapes)")
    _add_run_options(evaluate)
    evaluate.add_argument("--split", help="split to score (default: the config's test split)")
    evaluate.add_argument("--limit", type=int, help="score only the first N images")
    evaluate.add_argument("--output", help="also write the metrics to this JSON file")
    evaluate.set_defaults(func=run_evaluate)

    plot = commands.add_parser("plot", help="draw where each generated word looked")
    _add_run_options(plot)
    plot.add_argument("image", metavar="IMAGE")
    plot.add_argument("--output", required=True, help="figure file (.png, .svg or .pdf)")
    plot.set_defaults(func=run_plot)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", required=True, help="run directory of a trained captioner")
    parser.add_argument("--checkpoint", choices=("best", "last"),
                        help="weights to load (default: best if the run has it, else last)")
    parser.add_argument("--beam", type=int, help="beam size (default: the config's decode.beam)")
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

    trained = load_trained(args.run, args.checkpoint, hard_decoding=args.hard_decoding)
    for path, (_, caption) in zip(args.images, trained.caption_files(args.images, beam=args.beam),
                                  strict=True):
        print(f"{path}\t{caption.text}")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    from attnlab.captioning import evaluate_split, load_trained

    if args.output:
        check_output_path(args.output)  # before minutes of decoding
    trained = load_trained(args.run, args.checkpoint, hard_decoding=args.hard_decoding)
    metrics, signature, count = evaluate_split(trained, args.split, beam=args.beam,
                                               limit=args.limit)
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
    return 0


def run_plot(args: argparse.Namespace) -> int:
    from attnlab.captioning import load_trained, plot_caption

    check_output_path(args.output)  # before the model is loaded and run
    trained = load_trained(args.run, args.checkpoint, hard_decoding=args.hard_decoding)
    caption, path = plot_caption(trained, args.image, args.output, beam=args.beam)
    print(f"{args.image}\t{caption.text}\nfigure: {path}")
    return 0
