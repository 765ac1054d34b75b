"""The data the tests read from local copies: the folder $ATTNLAB_DATA names (by default
../shared/data beside the checkout), laid out as `attnlab data` writes it; a test that needs a
copy skips, saying which command makes it."""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_ROOT = Path(os.environ.get("ATTNLAB_DATA", REPO_ROOT.parent / "shared" / "data"))
# Each folder's name under DATA_ROOT, and the `attnlab data` command that fills it.
MAKERS = {"multi30k": "multi30k", "rwth-deen-gold": "rwth-gold", "wmt-news-deen": "wmt-news"}


def missing(folder: str) -> str:
    """Why a test that needs DATA_ROOT/folder skips: the command that makes it."""
    return (f"no copy of {folder} in {DATA_ROOT}: make one with `attnlab data {MAKERS[folder]} "
            f"--dest DIR/{folder}` and set ATTNLAB_DATA=DIR")
