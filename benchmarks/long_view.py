"""A 5,000-character input through the Python API: the time and peak memory of a translation
result's notebook view (`_repr_html_`) or its PNG (`save_png`), bounded by the input since
issue 36 (neighbours merged past 250 tokens a side or 10,000 cells).

    /usr/bin/time -v python benchmarks/long_view.py --run runs/demo/run png   # "Maximum resident"
    /usr/bin/time -v python benchmarks/long_view.py --run runs/demo/run html

The output is cut at 12 characters (a dates model writes about 11), so the attention is
(12, 5001): the case where one side is long.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from PIL import Image

import attnlab


def arguments() -> argparse.ArgumentParser:
    from common import whole_number

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a character-level translation run")
    parser.add_argument("what", choices=("html", "png"))
    parser.add_argument("--characters", type=whole_number(1), default=5000)
    return parser


def main() -> None:
    args = arguments().parse_args()
    model = attnlab.load(args.run)
    text = ("le 14 juillet 1789, " * (args.characters // 20 + 1))[: args.characters]
    start = time.perf_counter()
    result = model.translate([text], max_len_ratio=0, max_len_extra=12, beam=1)[0]
    assert result.weights is not None  # a model with attention
    print(f"translate: {time.perf_counter() - start:.1f} s; attention {result.weights.shape}")
    start = time.perf_counter()
    if args.what == "html":
        print(f"_repr_html_: {len(result._repr_html_()):,} characters")
    else:
        with tempfile.TemporaryDirectory() as folder:
            path = result.save_png(Path(folder) / "long.png")
            Image.MAX_IMAGE_PIXELS = None
            with Image.open(path) as image:
                print(f"save_png: {image.size[0]:,} x {image.size[1]:,} px")
    print(f"{args.what}: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
