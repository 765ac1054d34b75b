"""Reading an image file (load_image, what `caption predict` and training read) takes memory in
proportion to the image, whatever its shape: a 1 x 200,000 PNG of 862 bytes once took 1.2 GB on
its way to a 32-pixel square (40 GB to a 224 one); and the square is the one scaling the whole
image, then cropping its centre, gives."""

import numpy as np
import pytest
from PIL import Image

from attnlab.captioning.data import fit_square, load_image, square_pixels

from .image_memory import MIB, NAMES, bound, can_measure, decode_peaks, write_images


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    return write_images(tmp_path_factory.mktemp("extreme"))


@pytest.fixture(scope="module")
def peaks(images):
    if not can_measure():
        pytest.skip("peak memory is read from /proc/self (Linux)")
    return decode_peaks("file", images)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_reading_an_image_takes_memory_in_proportion_to_it(images, peaks, name):
    _, width, height = images[name]
    assert peaks[name] is not None, f"{name}: more than {bound(width, height) // MIB} MiB"
    assert peaks[name] <= bound(width, height), f"{name}: {peaks[name] / MIB:.1f} MiB"


@pytest.mark.slow
def test_a_jpeg_is_decoded_at_a_reduced_scale(images, peaks):
    _, width, height = images["4,000 x 3,000 JPEG"]
    assert peaks["4,000 x 3,000 JPEG"] < 4 * width * height / 16  # 1/8 scale: 1/64 the pixels


def test_an_extreme_image_is_read_as_its_centre(tmp_path):
    """(Small, so that a regression cannot take the memory the child's cap protects.)"""
    column = np.zeros((2001, 1, 3), dtype=np.uint8)
    column[:, :, 2] = 255
    column[990:1011] = (255, 0, 0)
    Image.fromarray(column).save(tmp_path / "column.png")
    pixels, original = load_image(tmp_path / "column.png", 16)
    assert original == (1, 2001) and pixels.shape == (16, 16, 3)
    assert np.all(pixels == (255, 0, 0))


def scale_then_crop(image: Image.Image, size: int) -> np.ndarray:
    """The obvious way, and the old one: scale the whole image, then crop the centre."""
    image = image.convert("RGB")
    scale, left, top = fit_square(image.width, image.height, size)
    scaled = image.resize(
        (round(image.width * scale), round(image.height * scale)), Image.Resampling.BICUBIC
    )
    left, top = round(left), round(top)
    return np.asarray(scaled.crop((left, top, left + size, top + size)))


# Sizes whose scaled image and centre fall on whole pixels, so the two ways agree exactly.
@pytest.mark.parametrize(
    ("width", "height", "mode", "size"),
    [
        (300, 200, "RGB", 64),
        (200, 300, "P", 64),
        (10, 100, "L", 32),
        (40, 40, "RGBA", 32),
        (100, 10, "LA", 32),
        (1, 9, "RGB", 8),
        (64, 64, "RGB", 64),
        (640, 480, "I;16", 96),
    ],
)
def test_the_square_is_the_centre_of_the_scaled_image(width, height, mode, size):
    noise = np.random.default_rng(width).integers(
        0, 256, (height // 4 + 1, width // 4 + 1, 3), dtype=np.uint8
    )
    smooth = Image.fromarray(noise).resize((width, height), Image.Resampling.BILINEAR)
    image = smooth.convert(mode)
    np.testing.assert_array_equal(square_pixels(image, size), scale_then_crop(image, size))
