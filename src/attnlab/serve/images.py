"""Uploaded images, in memory: their size read from the header before any pixel is decoded (a
small file can declare a huge image: a decompression bomb). The Run that takes the upload
decodes it into the square its model sees (captioning's square_pixels, in proportion to the
image)."""

from __future__ import annotations

import io
import re
import struct
import warnings

from PIL import Image

from .problems import invalid, too_large

# What Pillow raises for a file it cannot read (struct.error: a header cut short).
UNREADABLE = (OSError, ValueError, SyntaxError, EOFError, struct.error)
_REPR = re.compile(r"\s*<[^<>]* at 0x[0-9a-fA-F]+>")  # "<_io.BytesIO object at 0x7f...>"


def open_upload(data: bytes, max_pixels: int) -> Image.Image:
    """The image in `data`, opened lazily (header read, pixels not decoded); 413 when it
    declares more than max_pixels, 422 when it is not an image PIL reads."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our limit is lower
            image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError:  # Pillow's own limit, hit while reading the header
        raise too_large(f"the image declares more than the {max_pixels:,} pixels this server "
                        f"decodes") from None
    except Image.UnidentifiedImageError:
        raise invalid("the upload is not an image this server reads (PNG, JPEG, GIF, WebP, "
                      "BMP or another format Pillow opens)") from None
    except UNREADABLE as error:
        raise invalid(f"the upload is not an image this server reads ({reason(error)})") from None
    width, height = image.size
    if width * height > max_pixels:
        raise too_large(f"the image is {width} x {height} pixels, more than the "
                        f"{max_pixels:,} pixels this server decodes")
    return image


def reason(error: BaseException) -> str:
    """Pillow's message as a few words: its first line, without the repr of our buffer."""
    lines = _REPR.sub("", str(error)).strip().splitlines()
    return lines[0].rstrip(".") if lines and lines[0] else type(error).__name__
