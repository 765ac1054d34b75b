"""The tiny dates data the suite tests train on."""

import pytest

from attnlab.data import write_dates


@pytest.fixture(scope="module")
def dates_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("dates")
    write_dates(directory, size=400, seed=3)
    return directory
