"""Labels no installed font can draw: one warning that says what to install, then boxes drawn
from matplotlib's Last Resort font, not a warning per character per drawing."""

import warnings

import numpy as np
import pytest

from attnlab.viz import fonts, plot_alignment

CHINESE = ["2024年", "3月", "5日", "星期二"]


@pytest.fixture
def no_cjk_font(monkeypatch):
    monkeypatch.setattr(fonts, "find_cjk_family", lambda: None)
    monkeypatch.setattr(fonts, "_warned", False)


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_missing_glyphs_are_one_warning_however_many_drawings(no_cjk_font, tmp_path, suffix):
    weights = np.full((4, 4), 0.25)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for number in range(3):
            plot_alignment(weights, CHINESE, ["2", "0", "2", "4"],
                           tmp_path / f"{number}.{suffix}", title="日期")
    messages = [str(warning.message) for warning in caught]
    assert len(messages) == 1, messages
    assert "fonts-noto-cjk" in messages[0] and "年" in messages[0]


def test_the_last_resort_font_draws_what_no_installed_font_has(no_cjk_font):
    with pytest.warns(UserWarning, match="boxes"):
        families = fonts.font_families(CHINESE)
    assert families == [fonts.BASE_FAMILY, fonts.last_resort_family()]
    assert fonts.last_resort_family() is not None  # matplotlib >= 3.10 bundles it
    assert fonts.missing_glyphs(CHINESE, families) == set()
    assert fonts.font_families(["Größe"]) == [fonts.BASE_FAMILY]  # only when it is needed
