"""Decode settings given past the YAML (the command line, the explorer, attnlab.load) are
checked as the YAML's are: a negative or non-finite value is one sentence naming the setting."""

import math

import pytest

from attnlab.captioning.config import DecodeConfig as CaptionDecode
from attnlab.errors import ConfigError
from attnlab.translation.config import DecodeConfig


@pytest.mark.parametrize(("given", "message"), [
    ({"alpha": -1.0}, "decode.alpha: must be from 0 to 10, got -1.0"),
    ({"beta": math.nan}, "decode.beta: must be a finite number, got nan"),
    ({"max_len_ratio": math.inf}, "decode.max_len_ratio: must be a finite number, got inf"),
    ({"max_len_extra": -1}, "decode.max_len_extra: must be >= 0, got -1"),
    ({"beam": 0}, "decode.beam: must be positive, got 0"),
])
def test_overridden_settings_are_checked(given, message):
    # before: dataclasses.replace took them unchecked (inf ended in an OverflowError later)
    with pytest.raises(ConfigError, match=message):
        DecodeConfig().overridden(**given)


def test_captioning_settings_are_checked_too():
    with pytest.raises(ConfigError, match="decode.alpha: must be a finite number, got inf"):
        CaptionDecode().overridden(alpha=math.inf)
    assert CaptionDecode().overridden(alpha=0.5, beam=None).alpha == 0.5


def test_good_settings_and_none_pass():
    decode = DecodeConfig().overridden(alpha=0.6, beta=0.2, beam=None, max_len_ratio=2.0)
    assert (decode.alpha, decode.beta, decode.beam, decode.max_len_ratio) == (0.6, 0.2, 5, 2.0)
