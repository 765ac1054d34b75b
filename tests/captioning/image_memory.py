"""The memory decoding an image takes, measured in a child process, and the images that once
took gigabytes. Pillow allocates pixels outside Python's allocator (tracemalloc sees none of
them), so what is measured is the child's resident memory: its peak (VmHWM, reset first through
/proc/self/clear_refs) minus what it held before. Each decode runs under an address-space cap a
little above the bound, so a regression fails with MemoryError instead of filling the machine.

The bound, for a width x height image made into the model's square: 8 bytes a pixel (the file's
pixels decoded, at most 4 bytes each, and for a mode other than RGB the centre square in RGB),
8 bytes a row (Pillow's table of row pointers) and 16 MiB for everything of fixed size."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

MIB = 1024 * 1024
SLACK = 16 * MIB
SIZE = 224  # the square of an ImageNet-sized captioner: the old way scaled 1 x 200,000 to 224 wide


def bound(width: int, height: int) -> int:
    return 8 * width * height + 8 * height + SLACK


# The images write_images makes, by name (the tests parametrise over them).
NAMES = ("1 x 200,000", "200,000 x 1", "2 x 4,000,000 grey, 12 KB",
         "3,000 x 3,000 palette, 6 KB", "4,000 x 3,000 JPEG")


def write_images(folder: Path) -> dict[str, tuple[Path, int, int]]:
    """name -> (file, width, height): extreme aspect ratios, a PNG whose few KB decompress to
    megapixels, and a photo-sized JPEG."""
    images = {
        "1 x 200,000": ("tall.png", Image.new("RGB", (1, 200_000), (200, 30, 30))),
        "200,000 x 1": ("wide.png", Image.new("RGB", (200_000, 1), (30, 200, 30))),
        "2 x 4,000,000 grey, 12 KB": ("bomb.png", Image.new("L", (2, 4_000_000), 90)),
        "3,000 x 3,000 palette, 6 KB": ("palette.png", Image.new("P", (3000, 3000), 3)),
    }
    noise = np.random.default_rng(0).integers(0, 256, (300, 400, 3), dtype=np.uint8)
    images["4,000 x 3,000 JPEG"] = ("photo.jpg", Image.fromarray(noise).resize((4000, 3000)))
    assert tuple(images) == NAMES
    written = {}
    for name, (file, image) in images.items():
        image.save(folder / file)
        written[name] = (folder / file, *image.size)
    return written


CHILD = r"""
import ctypes, json, re, resource, sys
from pathlib import Path
from types import SimpleNamespace

from attnlab.captioning import CaptioningRun
from attnlab.captioning.data import load_image
from attnlab.serve.images import open_upload


def status(key):
    found = re.search(rf"{key}:\s+(\d+) kB", Path("/proc/self/status").read_text())
    return int(found.group(1)) * 1024


soft, hard = resource.getrlimit(resource.RLIMIT_AS)
peaks = []
for way, path, size, cap in json.loads(sys.argv[1]):
    data = Path(path).read_bytes()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    resource.setrlimit(resource.RLIMIT_AS, (status("VmSize") + cap, hard))
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    before = status("VmRSS")
    try:
        if way == "upload":
            run = SimpleNamespace(config=SimpleNamespace(data=SimpleNamespace(image_size=size)))
            # as the server's captioning Run decodes an upload
            pixels = CaptioningRun.square_pixels(run, open_upload(data, 25_000_000))
        else:
            pixels = load_image(path, size)[0]
        assert pixels.shape == (size, size, 3), pixels.shape
        peaks.append(status("VmHWM") - before)
    except MemoryError:
        peaks.append(None)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    del data
print(json.dumps(peaks))
"""


def can_measure() -> bool:
    return os.access("/proc/self/clear_refs", os.W_OK)


def decode_peaks(way: str, images: dict[str, tuple[Path, int, int]]) -> dict[str, int | None]:
    """name -> the bytes decoding it to SIZE x SIZE grew resident memory by at its peak, None
    when it hit the cap (its bound + 256 MiB). way: "file" (load_image, as `caption predict`
    reads an image) or "upload" (as the server decodes one)."""
    cases = [
        (way, str(path), SIZE, bound(width, height) + 256 * MIB)
        for path, width, height in images.values()
    ]
    child = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert child.returncode == 0, child.stderr
    return dict(zip(images, json.loads(child.stdout), strict=True))
