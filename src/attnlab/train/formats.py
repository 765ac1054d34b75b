"""The run directory's format history: what the format before this one wrote, read as this one.

    3  the attention section names its mechanism (`mechanism: global | local-m | local-p |
       hard`, `window` only with the local ones); the language-model task is "lm".
    2  (read, upgraded in memory, never rewritten) attention as three switches (`window`,
       `predictive`, `hard`); the language-model task was "language_model".
    1  (refused) meta.json recorded no sha256 of the checkpoint's files.

Only the format before the current one is read: each format change adds its upgrade here and
drops the oldest one. The upgrade is of plain JSON data, so it needs no model code.

Beside the numbered formats, what older versions wrote that is still read, as this one:

- config.json's `train.device: null` (before train.device had "auto"): what "auto" means now;
- a sampler state that names no order (before the numpy sampler): it was shuffled by
  random.Random("seed/epoch"), so it resumes with PythonOrder, the "python" order registered
  into the sampler's ORDERS here, and keeps it in the run's later checkpoints.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from attnlab.data.sampler import ORDERS, index_dtype
from attnlab.errors import CheckpointError

FORMAT_VERSION = 3
OLDEST_READ = 2
TASK_NAMES_2 = {"language_model": "lm"}
SWITCHES_2 = ("predictive", "hard")


def upgrade_meta(meta: dict[str, Any], where: object) -> dict[str, Any]:
    """A checkpoint's meta.json in the current format; CheckpointError (one sentence naming
    `where`) for a format older than OLDEST_READ or newer than this attnlab's."""
    version = meta.get("format_version", 1)
    if not isinstance(version, int) or not OLDEST_READ <= version <= FORMAT_VERSION:
        raise CheckpointError(f"{where} is in run format {version!r}; this attnlab reads "
                              f"formats {OLDEST_READ} to {FORMAT_VERSION}: train it again with "
                              f"this version")
    if version == FORMAT_VERSION:
        return meta
    signature = dict(meta.get("signature") or {})
    if signature.get("task") in TASK_NAMES_2:
        signature["task"] = TASK_NAMES_2[signature["task"]]
    if isinstance(signature.get("model"), Mapping):
        signature["model"] = upgrade_config(signature["model"])
    return {**meta, "signature": signature, "format_version": FORMAT_VERSION}


def upgrade_config(config: Any) -> Any:
    """A config (or a part of one) as plain data, with every format-2 attention section
    rewritten to name its mechanism and a null train.device read as "auto"; anything else is
    returned as it is."""
    if not isinstance(config, Mapping):
        return config
    upgraded = {key: upgrade_config(value) for key, value in config.items()}
    attention = upgraded.get("attention")
    if isinstance(attention, Mapping) and any(key in attention for key in SWITCHES_2) \
            and "mechanism" not in attention:
        upgraded["attention"] = _named_mechanism(attention)
    train = upgraded.get("train")
    if isinstance(train, Mapping) and "device" in train and train["device"] is None:
        upgraded["train"] = {**train, "device": "auto"}
    return upgraded


def upgrade_training_state(state: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's training state with its sampler state naming its order: one that names
    none was saved by the first sampler, and resumes with that sampler's "python" order."""
    sampler = state.get("sampler")
    if isinstance(sampler, Mapping) and "order" not in sampler:
        return {**state, "sampler": {**sampler, "order": LEGACY_ORDER}}
    return state


class PythonOrder:
    """The permutations of attnlab's first sampler (random.Random("seed/epoch").shuffle), kept
    so that a run checkpointed with it resumes with exactly the batches it would have had. It
    builds n Python ints per epoch: new runs use the sampler's own order."""

    def __init__(self, seed: int, epoch: int):
        self.rng = random.Random(f"{seed}/{epoch}")

    def permutation(self, n: int) -> np.ndarray:
        order = list(range(n))
        self.rng.shuffle(order)
        return np.array(order, dtype=index_dtype(n))


LEGACY_ORDER = "python"   # the order of a sampler state that names none
ORDERS[LEGACY_ORDER] = PythonOrder


def _named_mechanism(attention: Mapping[str, Any]) -> dict[str, Any]:
    """Format 2's switches as the mechanism they trained: `predictive` without a `window`
    trained global attention, so that is what it is called."""
    section = {key: value for key, value in attention.items() if key not in SWITCHES_2}
    if attention.get("hard"):
        mechanism = "hard"
    elif attention.get("window") is None:
        mechanism = "global"
    else:
        mechanism = "local-p" if attention.get("predictive") else "local-m"
    return {"mechanism": mechanism, **section}
