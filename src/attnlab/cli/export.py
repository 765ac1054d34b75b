"""`attnlab export --run DIR --output MODEL_DIR`: a trained run as a folder to hand over."""

from __future__ import annotations

import argparse

from .options import Once


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export", help="write a run's model as a self-contained folder to hand over",
        description="Write MODEL_DIR: the checkpoint's weights (safetensors, without the "
        "optimiser state), the config, the vocabularies, the training curves, meta.json (its "
        "metrics and sha256) and MODEL.md (the model card). Every command that takes --run DIR "
        "takes MODEL_DIR, and attnlab.load(MODEL_DIR) loads it.")
    parser.add_argument("--run", required=True, metavar="DIR", action=Once,
                        help="run directory written by attnlab train")
    parser.add_argument("--output", required=True, metavar="MODEL_DIR", action=Once,
                        help="the folder to write (absent or empty; written whole at the end)")
    parser.add_argument("--checkpoint", choices=("best", "last"),
                        help="weights to export (default: best if the run has it, else last)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace MODEL_DIR when it holds an earlier export")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.hub import export_model

    done = export_model(args.run, args.output, checkpoint=args.checkpoint,
                        overwrite=args.overwrite)
    print(f"exported the {done.checkpoint} checkpoint (step {done.step}) of {args.run} to "
          f"{done.path}: {megabytes(done.run_bytes)} -> {megabytes(done.model_bytes)}")
    print(f"read it like a run: attnlab ... --run {done.path}; its card: {done.path}/MODEL.md")
    return 0


def megabytes(size: int) -> str:
    return f"{size / 1e6:.2f} MB" if size >= 10_000 else f"{size:,} bytes"
