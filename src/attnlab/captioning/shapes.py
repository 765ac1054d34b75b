"""The built-in shapes dataset: 1-4 coloured shapes on a canvas, captioned left to right.

    write_shapes("data/shapes", size=6000, seed=1)   # images/*.png + dataset_shapes.json

Image i depends only on (seed, i), so a larger dataset extends a smaller one with the same seed,
and its split is fixed by i: i % 10 == 0 is test, i % 10 == 1 is val, the rest train. Objects
never overlap, their centres are at least 3/4 of the smallest object side apart horizontally
(so "left of" is never a close call), and no image has two objects of the same colour and shape.

Each image has three reference captions naming every object from left to right, e.g.
"a red circle left of a blue square", "a red circle to the left of a blue square",
"from left to right a red circle and a blue square". The JSON is the Karpathy-split format
(`images[i].filename/split/sentences[j].tokens/raw`) plus, per image, `width`, `height` and
`boxes`: [{"bbox": [x0, y0, x1, y1], "colour": ..., "shape": ...}] in pixels, x1/y1 exclusive,
listed left to right.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from attnlab.errors import ConfigError
from attnlab.files import writing

COLOURS = {
    "red": (220, 40, 40),
    "green": (40, 180, 60),
    "blue": (60, 100, 240),
    "yellow": (235, 215, 40),
    "purple": (160, 60, 210),
    "white": (235, 235, 235),
}
SHAPES = ("circle", "square", "triangle", "diamond")
BACKGROUND = (25, 25, 25)
JSON_NAME = "dataset_shapes.json"
MAX_OBJECTS = 4
SIZE_RANGE = (0.2, 0.3)  # object side as a share of the canvas side
PLACEMENT_TRIES = 200


@dataclass(frozen=True)
class ShapeObject:
    """One drawn object: box (x0, y0, x1, y1) in pixels, x1/y1 exclusive."""

    colour: str
    shape: str
    box: tuple[int, int, int, int]

    @property
    def phrase(self) -> str:
        return f"a {self.colour} {self.shape}"


def split_of(index: int) -> str:
    """test, val or train, from the image index alone (so sizes and seeds agree)."""
    return {0: "test", 1: "val"}.get(index % 10, "train")


def sample_objects(rng: random.Random, canvas: int) -> list[ShapeObject]:
    """1..MAX_OBJECTS non-overlapping objects, sorted left to right by box centre."""
    count = rng.randint(1, MAX_OBJECTS)
    kinds = rng.sample([(c, s) for c in COLOURS for s in SHAPES], count)  # no repeats
    low, high = (max(4, round(share * canvas)) for share in SIZE_RANGE)
    while True:  # start over when the last objects find no room
        boxes: list[tuple[int, int, int, int]] = []
        for _ in range(count):
            box = _place(rng, canvas, rng.randint(low, high), boxes, gap=3 * low // 4)
            if box is None:
                break
            boxes.append(box)
        if len(boxes) == count:
            objects = [ShapeObject(c, s, b) for (c, s), b in zip(kinds, boxes, strict=True)]
            return sorted(objects, key=lambda o: o.box[0] + o.box[2])


def _place(rng: random.Random, canvas: int, side: int, boxes: list, gap: int):
    """A box of this side clear of `boxes` (1 px apart) with its centre `gap` px away from
    theirs horizontally; None after PLACEMENT_TRIES tries."""
    for _ in range(PLACEMENT_TRIES):
        x0, y0 = rng.randint(0, canvas - side), rng.randint(0, canvas - side)
        box = (x0, y0, x0 + side, y0 + side)
        clear = all(box[0] > b[2] or b[0] > box[2] or box[1] > b[3] or b[1] > box[3]
                    for b in boxes)
        apart = all(abs((box[0] + box[2]) - (b[0] + b[2])) >= 2 * gap for b in boxes)
        if clear and apart:
            return box
    return None


def draw(objects: list[ShapeObject], canvas: int) -> Image.Image:
    """The RGB image of these objects on the background."""
    image = Image.new("RGB", (canvas, canvas), BACKGROUND)
    pen = ImageDraw.Draw(image)
    for obj in objects:
        x0, y0, x1, y1 = obj.box[0], obj.box[1], obj.box[2] - 1, obj.box[3] - 1  # inclusive
        xm, ym, fill = (x0 + x1) / 2, (y0 + y1) / 2, COLOURS[obj.colour]
        if obj.shape == "circle":
            pen.ellipse((x0, y0, x1, y1), fill=fill)
        elif obj.shape == "square":
            pen.rectangle((x0, y0, x1, y1), fill=fill)
        elif obj.shape == "triangle":
            pen.polygon([(x0, y1), (xm, y0), (x1, y1)], fill=fill)
        else:  # diamond
            pen.polygon([(xm, y0), (x1, ym), (xm, y1), (x0, ym)], fill=fill)
    return image


def captions(objects: list[ShapeObject]) -> list[str]:
    """Three references, each naming the objects left to right."""
    phrases = [obj.phrase for obj in objects]
    if len(phrases) == 1:
        return [phrases[0], f"there is {phrases[0]}", f"a single {phrases[0][2:]}"]
    listed = " ".join(phrases[:-1]) + " and " + phrases[-1]
    return [" left of ".join(phrases), " to the left of ".join(phrases),
            f"from left to right {listed}"]


def image_entry(index: int, seed: int, canvas: int) -> tuple[dict, Image.Image]:
    """The Karpathy JSON entry and the image of image `index`."""
    rng = random.Random(seed * 1_000_003 + index)
    objects = sample_objects(rng, canvas)
    sentences = [{"tokens": text.split(), "raw": text[0].upper() + text[1:] + ".",
                  "imgid": index, "sentid": 3 * index + j}
                 for j, text in enumerate(captions(objects))]
    entry = {"filename": f"{index:06d}.png", "imgid": index, "split": split_of(index),
             "sentids": [s["sentid"] for s in sentences], "sentences": sentences,
             "width": canvas, "height": canvas,
             "boxes": [{"bbox": list(o.box), "colour": o.colour, "shape": o.shape}
                       for o in objects]}
    return entry, draw(objects, canvas)


def write_shapes(dest: str | Path, *, size: int = 6000, seed: int = 1,
                 image_size: int = 64) -> dict[str, int]:
    """Write dest/images/NNNNNN.png and dest/dataset_shapes.json; returns images per split."""
    if size < 1:
        raise ConfigError(f"shapes: --size must be at least 1, got {size}")
    if image_size < 32:
        raise ConfigError(f"shapes: image size must be at least 32 px, got {image_size}")
    dest = Path(dest)
    entries = []
    with writing(dest):  # a full disk or a read-only folder: one sentence naming dest
        (dest / "images").mkdir(parents=True, exist_ok=True)
        for index in range(size):
            entry, image = image_entry(index, seed, image_size)
            image.save(dest / "images" / entry["filename"], optimize=False)
            entries.append(entry)
        meta = {"dataset": "shapes", "seed": seed, "image_size": image_size, "images": entries}
        (dest / JSON_NAME).write_text(json.dumps(meta) + "\n", encoding="utf-8")
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry["split"]] = counts.get(entry["split"], 0) + 1
    return counts
