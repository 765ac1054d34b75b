"""The tiny trained runs of the server tests (a character-level dates run, a shapes captioner,
an LSTMN), loaded with attnlab.load, for the notebook views."""

import pytest

import attnlab
from serve.conftest import dates_run, lstmn_run, shapes_run  # noqa: F401 (fixtures)

DATE = "3 March 1999"


@pytest.fixture(scope="session")
def translator(dates_run):  # noqa: F811
    return attnlab.load(dates_run)


@pytest.fixture(scope="session")
def translation(translator):
    """The 3-best translation of DATE."""
    return translator.translate([DATE], beam=3, n_best=3)[0]


@pytest.fixture(scope="session")
def caption(shapes_run):  # noqa: F811
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (64, 64), "white")
    ImageDraw.Draw(image).ellipse((8, 8, 30, 30), fill="red")
    return attnlab.load(shapes_run).caption([image])[0]


@pytest.fixture(scope="session")
def reading(lstmn_run):  # noqa: F811
    return attnlab.load(lstmn_run).read("the cat sees the dog .")
