"""The shapes dataset generator and the Karpathy-split loader that reads it."""

import json

import numpy as np
import pytest
import torch
from PIL import Image

from attnlab.captioning.data import CaptionSplit, caption_tokens, fit_box, read_karpathy
from attnlab.captioning.shapes import COLOURS, JSON_NAME, SHAPES, write_shapes
from attnlab.cli import main
from attnlab.errors import DataError


@pytest.fixture(scope="module")
def shapes_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("shapes")
    write_shapes(directory, size=30, seed=5, image_size=48)
    return directory


def read_json(directory):
    return json.loads((directory / JSON_NAME).read_text())


def mentions(tokens):
    """The (colour, shape) pairs a caption names, in order."""
    return [(a, b) for a, b in zip(tokens, tokens[1:], strict=False)
            if a in COLOURS and b in SHAPES]


def test_same_seed_same_dataset_other_seed_another(shapes_dir, tmp_path):
    write_shapes(tmp_path / "again", size=30, seed=5, image_size=48)
    write_shapes(tmp_path / "other", size=30, seed=6, image_size=48)
    assert read_json(tmp_path / "again") == read_json(shapes_dir)
    for name in ("000000.png", "000017.png"):
        again = (tmp_path / "again" / "images" / name).read_bytes()
        assert again == (shapes_dir / "images" / name).read_bytes()
    assert read_json(tmp_path / "other")["images"] != read_json(shapes_dir)["images"]


def test_a_larger_dataset_extends_a_smaller_one(shapes_dir, tmp_path):
    write_shapes(tmp_path / "small", size=12, seed=5, image_size=48)
    small = read_json(tmp_path / "small")["images"]
    assert small == read_json(shapes_dir)["images"][:12]


def test_every_caption_names_the_objects_left_to_right(shapes_dir):
    for entry in read_json(shapes_dir)["images"]:
        boxes = entry["boxes"]
        assert 1 <= len(boxes) <= 4
        centres = [(b["bbox"][0] + b["bbox"][2]) / 2 for b in boxes]
        assert centres == sorted(centres) and len(set(centres)) == len(centres)
        named = [(b["colour"], b["shape"]) for b in boxes]
        assert len(entry["sentences"]) == 3
        for sentence in entry["sentences"]:
            assert mentions(sentence["tokens"]) == named


def test_boxes_lie_inside_the_image_and_hold_their_shape(shapes_dir):
    for entry in read_json(shapes_dir)["images"]:
        with Image.open(shapes_dir / "images" / entry["filename"]) as image:
            pixels = np.asarray(image)
        assert pixels.shape == (entry["height"], entry["width"], 3) == (48, 48, 3)
        for box in entry["boxes"]:
            x0, y0, x1, y1 = box["bbox"]
            assert 0 <= x0 < x1 <= 48 and 0 <= y0 < y1 <= 48
            # the centre pixel of every shape kind is inside the shape
            centre = pixels[(y0 + y1 - 1) // 2, (x0 + x1 - 1) // 2]
            assert tuple(centre) == COLOURS[box["colour"]]


def test_karpathy_loader_reads_the_generated_file(shapes_dir):
    images = read_karpathy(shapes_dir / JSON_NAME)
    assert len(images) == 30
    assert [im.split for im in images[:3]] == ["test", "val", "train"]
    first = read_json(shapes_dir)["images"][0]
    assert images[0].captions[0] == first["sentences"][0]["tokens"]
    assert [b.box for b in images[0].boxes] == [tuple(map(float, b["bbox"]))
                                               for b in first["boxes"]]
    split = CaptionSplit(images[:4], shapes_dir / "images", 24, cache=True)
    pixels = split.pixels()
    assert pixels.shape == (4, 24, 24, 3) and pixels.dtype == torch.uint8
    # images are halved (48 -> 24 px), and so are the boxes
    for image, fitted in zip(images[:4], split.boxes(), strict=True):
        assert [b.box for b in fitted] == [tuple(v / 2 for v in b.box) for b in image.boxes]


def test_fit_box_follows_resize_and_centre_crop():
    # 200 x 100 -> shorter side 50: scale 0.5, 100 x 50, crop 25 px off the left
    assert fit_box((60, 10, 100, 30), 200, 100, 50) == (5.0, 5.0, 25.0, 15.0)
    assert fit_box((0, 0, 40, 100), 200, 100, 50) == (0.0, 0.0, 0.0, 50.0)  # cropped away


def test_loader_tokenises_raw_text_without_tokens_and_reports_bad_files(tmp_path):
    assert caption_tokens({"raw": "A dog's ball, red."}) == ["a", "dog's", "ball", "red"]
    (tmp_path / "bad.json").write_text('{"images": [{"split": "train"}]}')
    with pytest.raises(DataError, match="entry 0"):
        read_karpathy(tmp_path / "bad.json")
    with pytest.raises(DataError, match="does not exist"):
        read_karpathy(tmp_path / "missing.json")


def test_data_shapes_command(tmp_path, capsys):
    assert main(["data", "shapes", "--dest", str(tmp_path), "--size", "10", "--seed", "2",
                 "--image-size", "32"]) == 0
    assert "train 8" in capsys.readouterr().out
    assert len(list((tmp_path / "images").glob("*.png"))) == 10
    assert len(read_karpathy(tmp_path / JSON_NAME)) == 10
