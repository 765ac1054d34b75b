"""The run directory's format: the one this attnlab writes is the only one it reads.

    3  the attention section names its mechanism (`mechanism: global | local-m | local-p |
       hard`); the language-model task is "lm"; meta.json records the sha256 of each file.

Before the first release a format change is not upgraded: a run of an older format, or one that
older code wrote in this format (config.json's `train.device: null`, a sampler state naming no
order), is refused in one sentence that says to train it again. Each gate below returns its
file's data as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attnlab.errors import CheckpointError
from attnlab.version import __version__

FORMAT_VERSION = 3
RETRAIN = f"train it again with attnlab {__version__}"


def checked_meta(meta: dict[str, Any], where: object) -> dict[str, Any]:
    """A checkpoint's meta.json, or a CheckpointError naming `where` and the attnlab version
    that wrote it when its format is not this attnlab's."""
    version = meta.get("format_version", 1)
    if version != FORMAT_VERSION:
        made_by = meta.get("attnlab_version") or "an early version"
        raise CheckpointError(f"{where} is in run format {version!r}, written by attnlab "
                              f"{made_by}; this attnlab reads format {FORMAT_VERSION} only: "
                              f"{RETRAIN}")
    return meta


def checked_config(config: Any) -> Any:
    """config.json as plain data; refused when it sets train.device to null (what attnlab
    wrote before "auto")."""
    train = config.get("train") if isinstance(config, Mapping) else None
    if isinstance(train, Mapping) and "device" in train and train["device"] is None:
        raise CheckpointError(f"config.json sets train.device to null, as an earlier attnlab "
                              f"wrote it: {RETRAIN}")
    return config


def checked_training_state(state: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's training state; refused when its sampler state names no order (attnlab's
    first sampler wrote none)."""
    sampler = state.get("sampler")
    if isinstance(sampler, Mapping) and "order" not in sampler:
        raise CheckpointError(f"the training state's sampler names no order, as an earlier "
                              f"attnlab wrote it: {RETRAIN}")
    return state
