"""Uploads take memory in proportion to the image, whatever its shape (the bound and how it is
measured: tests/captioning/image_memory.py): a 1 x 200,000 PNG far under --max-pixels once
grew the server by gigabytes while it was resized. And what Pillow says about a bad upload
reaches the detail without the repr of the server's buffer."""

import io

import pytest
from PIL import Image

from captioning.image_memory import MIB, NAMES, bound, can_measure, decode_peaks, write_images

from .test_api import png_bytes, refused


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    return write_images(tmp_path_factory.mktemp("extreme"))


@pytest.fixture(scope="module")
def peaks(images):
    if not can_measure():
        pytest.skip("peak memory is read from /proc/self (Linux)")
    return decode_peaks("upload", images)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_an_upload_takes_memory_in_proportion_to_it(images, peaks, name):
    _, width, height = images[name]
    assert peaks[name] is not None, f"{name}: more than {bound(width, height) // MIB} MiB"
    assert peaks[name] <= bound(width, height), f"{name}: {peaks[name] / MIB:.1f} MiB"


@pytest.mark.parametrize("size", [(1, 200_000), (200_000, 1)])
def test_an_extreme_upload_is_captioned(client, size):
    upload = png_bytes(Image.new("RGB", size, (200, 30, 30)))
    response = client.post(
        "/api/caption", data={"run": "shapes"}, files={"image": ("line.png", upload, "image/png")}
    )
    assert response.status_code == 200 and response.json()["grid"] == [8, 8]


@pytest.mark.parametrize(
    ("upload", "expected"),
    [
        (
            b"not an image",
            "the upload is not an image this server reads (PNG, JPEG, GIF, WebP, BMP "
            "or another format Pillow opens)",
        ),
        (
            png_bytes(Image.new("RGB", (40, 40)))[:60],
            "the image cannot be decoded (image file is truncated",
        ),
    ],
)
def test_a_bad_upload_is_described_without_a_repr(client, upload, expected):
    response = client.post(
        "/api/caption", data={"run": "shapes"}, files={"image": ("x.png", upload, "image/png")}
    )
    detail = refused(response, 422)
    assert detail.startswith(expected) and " at 0x" not in detail and "<" not in detail


def test_a_jpeg_upload_decoded_at_a_reduced_scale_is_captioned(client):
    buffer = io.BytesIO()
    Image.new("RGB", (640, 480), (30, 30, 200)).save(buffer, format="JPEG")
    response = client.post(
        "/api/caption",
        data={"run": "shapes"},
        files={"image": ("x.jpg", buffer.getvalue(), "image/jpeg")},
    )
    assert response.status_code == 200
