"""Captioned images: the Karpathy-split JSON format, image transforms, and batches.

The format Flickr8k/Flickr30k/COCO captions are distributed in (Karpathy & Fei-Fei 2015):

    {"images": [{"filename": "x.jpg", "split": "train" | "val" | "test" | "restval",
                 "sentences": [{"tokens": ["a", "dog", ...], "raw": "A dog ..."}, ...],
                 "filepath": "train2014" (COCO only), ...}, ...]}

read together with the image folder. Entries may also carry `boxes` (see `shapes.py`), `width`
and `height`; boxes are kept in the pixels of the stored image and mapped by `fit_box`.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import torch
from PIL import Image

from attnlab.data import TensorBatch, collate
from attnlab.errors import DataError

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
Box = tuple[float, float, float, float]  # (x0, y0, x1, y1)


@dataclass(frozen=True)
class ObjectBox:
    """An object's box (x0, y0, x1, y1) in the stored image's pixels (x1/y1 exclusive)."""

    box: Box
    colour: str = ""
    shape: str = ""


@dataclass
class CaptionedImage:
    """One JSON entry: path relative to the image folder, split, captions as token lists,
    boxes (empty unless the dataset has them)."""

    path: str
    split: str
    captions: list[list[str]]
    boxes: list[ObjectBox]


def caption_tokens(sentence: dict) -> list[str]:
    """The sentence's `tokens`, or (without them) its `raw` text lowercased and split."""
    if "tokens" in sentence:
        return [str(token).lower() for token in sentence["tokens"]]
    return _WORD.findall(str(sentence.get("raw", "")).lower())


def read_karpathy(path: str | Path) -> list[CaptionedImage]:
    """Every image entry of a Karpathy-split JSON file, in file order."""
    path = Path(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["images"]
    except FileNotFoundError:
        raise DataError(f"caption file {path} does not exist "
                        f"(for shapes: attnlab data shapes --dest {path.parent})") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DataError(f"{path}: not a Karpathy-split caption file ({error})") from None
    images = []
    for number, entry in enumerate(entries):
        try:
            relative = str(Path(entry.get("filepath", "")) / entry["filename"])
            # A box is the file's four numbers (as Box says; the length is not checked here).
            boxes = [ObjectBox(cast(Box, tuple(float(v) for v in b["bbox"])),
                               b.get("colour", ""), b.get("shape", ""))
                     for b in entry.get("boxes", [])]
            captions = [caption_tokens(s) for s in entry["sentences"]]
            images.append(CaptionedImage(relative, str(entry["split"]), captions, boxes))
        except (KeyError, TypeError, ValueError) as error:
            raise DataError(f"{path}: image entry {number} lacks or garbles {error}") from None
    return images


def fit_square(width: int, height: int, size: int) -> tuple[float, float, float]:
    """How an image becomes size x size: (scale, left, top) = scale the shorter side to `size`,
    then crop the centre; pixel x of the original lands at x * scale - left."""
    scale = size / min(width, height)
    return scale, (width * scale - size) / 2, (height * scale - size) / 2


def fit_box(box: Box, width: int, height: int, size: int) -> Box:
    """A box of a width x height image in the size x size image `load_image` makes (clipped)."""
    scale, left, top = fit_square(width, height, size)
    x0, y0, x1, y1 = box
    moved = (x0 * scale - left, y0 * scale - top, x1 * scale - left, y1 * scale - top)
    x0, y0, x1, y1 = (min(max(v, 0.0), float(size)) for v in moved)
    return x0, y0, x1, y1


# Far above any photo a captioner reads (Flickr: ~0.25 MP), far below what would fill memory.
MAX_IMAGE_PIXELS = 50_000_000


def load_image(path: str | os.PathLike, size: int,
               max_pixels: int = MAX_IMAGE_PIXELS) -> tuple[np.ndarray, tuple[int, int]]:
    """RGB pixels (size, size, 3) uint8 (shorter side scaled, centre crop) and the original
    (width, height). An image of more than `max_pixels` is refused from its header, before
    its pixels are decoded (a small file can declare a huge image: a decompression bomb)."""
    try:
        with Image.open(path) as opened:
            width, height = opened.size  # read from the header only
            if width * height > max_pixels:
                raise DataError(f"image {path} is {width} x {height} pixels, more than the "
                                f"{max_pixels:,} attnlab decodes; resize it first")
            pixels = square_pixels(opened, size)
    except Image.DecompressionBombError:  # Pillow's own, larger limit, hit while opening
        raise DataError(f"image {path} declares more than the {max_pixels:,} pixels attnlab "
                        f"decodes; resize it first") from None
    except (OSError, ValueError) as error:
        if isinstance(error, DataError):
            raise
        raise DataError(f"cannot read image {path}: {error}") from None
    return pixels, (width, height)


def square_pixels(image: Image.Image, size: int) -> np.ndarray:
    """An image as the model sees it: (size, size, 3) uint8, the shorter side scaled to `size`,
    then the centre cropped (see fit_square).

    Memory stays in proportion to the image, whatever its shape: an opened file is decoded
    once, a JPEG at the smallest scale (1/2, 1/4, 1/8) that keeps `size`; a mode other than
    RGB converts only the centre square; and the square is resized in one step from the image
    (Pillow reads the box, holding at most size x shorter side pixels in between). Scaling the
    whole image first, then cropping, made a 1 x 200,000 upload 32 x 6,400,000 pixels (1 GB)."""
    width, height = image.size
    scale = size / min(width, height)
    # a no-op but for JPEG files not yet decoded
    image.draft("RGB", (math.ceil(width * scale), math.ceil(height * scale)))
    scale, left, top = fit_square(image.width, image.height, size)
    box = (left / scale, top / scale, (left + size) / scale, (top + size) / scale)
    if image.mode != "RGB":
        image, box = _rgb_around(image, box, size)
    square = image.resize((size, size), Image.Resampling.BICUBIC, box=box)
    return np.array(square, dtype=np.uint8)  # a writable copy


def _rgb_around(image: Image.Image, box: Box, size: int) -> tuple[Image.Image, Box]:
    """The part of `image` that resizing `box` to size x size reads, in RGB, and the box in it.
    The bicubic filter reaches 2 output pixels past the box (in input pixels: 2 x the box's
    side / size), so the result is the one converting the whole image would give."""
    x0, y0, x1, y1 = box
    reach = 2 * max(1.0, (x1 - x0) / size) + 1
    left, top = max(0, math.floor(x0 - reach)), max(0, math.floor(y0 - reach))
    right = min(image.width, math.ceil(x1 + reach))
    bottom = min(image.height, math.ceil(y1 + reach))
    if (left, top, right, bottom) != (0, 0, image.width, image.height):
        image = image.crop((left, top, right, bottom))
    return image.convert("RGB"), (x0 - left, y0 - top, x1 - left, y1 - top)


def normalise(pixels: torch.Tensor, mean, std) -> torch.Tensor:
    """uint8 (..., H, W, 3) -> float (..., 3, H, W), (x / 255 - mean) / std per channel."""
    x = pixels.float().div(255).movedim(-1, -3)
    shape = (3, 1, 1)
    return (x - torch.tensor(mean).view(shape)) / torch.tensor(std).view(shape)


class ImageStore:
    """The resized pixels of a list of image files, read on first use (and kept if `cache`)."""

    def __init__(self, folder: str | Path, paths: list[str], size: int, *, cache: bool):
        self.folder, self.paths, self.size, self.cache = Path(folder), paths, size, cache
        self._pixels: dict[int, torch.Tensor] = {}
        self.original_sizes: dict[int, tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self.paths)

    def pixels(self, index: int) -> torch.Tensor:
        """(size, size, 3) uint8."""
        if index in self._pixels:
            return self._pixels[index]
        array, original = load_image(self.folder / self.paths[index], self.size)
        pixels = torch.from_numpy(array)
        self.original_sizes[index] = original
        if self.cache:
            self._pixels[index] = pixels
        return pixels

    def batch(self, indices: list[int]) -> torch.Tensor:
        """(B, size, size, 3) uint8."""
        return torch.stack([self.pixels(i) for i in indices])


@dataclass
class CaptionBatch(TensorBatch):
    """B (image, caption) pairs: images (B, 3, H, W) float, normalised; tgt_in (B, T) = BOS +
    caption; tgt_out (B, T) = caption + EOS; tgt_mask (B, T) bool; indices: example indices."""

    images: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    tgt_mask: torch.Tensor
    num_target_tokens: int
    indices: list[int]


def caption_batch(images: torch.Tensor, captions: list[list[int]],
                  indices: list[int]) -> CaptionBatch:
    """Pad caption ids (without BOS/EOS) next to their images (B, 3, H, W)."""
    # collate pads the target side exactly as translation does; the source side is unused.
    padded = collate([((), ids) for ids in captions], indices=indices, src_eos=False)
    return CaptionBatch(images, padded.tgt_in, padded.tgt_out, padded.tgt_mask,
                        padded.num_target_tokens, padded.indices)


class CaptionSplit:
    """The images of one split with their references and boxes, read through an ImageStore."""

    def __init__(self, images: list[CaptionedImage], folder: str | Path, size: int, *,
                 cache: bool):
        self.images, self.size = images, size
        self.store = ImageStore(folder, [image.path for image in images], size, cache=cache)

    def __len__(self) -> int:
        return len(self.images)

    def pixels(self) -> torch.Tensor:
        """(N, size, size, 3) uint8, every image of the split."""
        return self.store.batch(list(range(len(self.images))))

    def references(self) -> list[list[list[str]]]:
        return [image.captions for image in self.images]

    def boxes(self) -> list[list[ObjectBox]]:
        """Each image's boxes in the size x size pixels the model sees."""
        fitted = []
        for index, image in enumerate(self.images):
            if image.boxes:
                self.store.pixels(index)  # reads the original size when not known yet
            width, height = self.store.original_sizes.get(index, (self.size, self.size))
            fitted.append([ObjectBox(fit_box(b.box, width, height, self.size), b.colour, b.shape)
                           for b in image.boxes])
        return fitted
