"""Download (or copy from a local copy) the RWTH German-English gold word alignments, checked by
SHA-256.

The test set of Vilar, Popović and Ney (2006): 508 Europarl sentence pairs with hand-made word
alignments, on which Luong et al. (2015, Table 6) score the alignments of attention (AER). Two
files, as the public Cross-Align repository (lisasiyu/Cross-Align, `data/`) holds them; the
original is distributed by RWTH Aachen (www-i6.informatik.rwth-aachen.de/goldAlignment):

    test.de-en   one pair a line, tokenised: "German ||| English"
    deen.talp    the gold links of the same lines: 1-indexed "i-j" (German word i, English
                 word j) for sure links and "ipj" for possible ones, space-separated

`attnlab evaluate --rwth DIR` and `attnlab report --rwth DIR` read such a folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .download import fetch_files

# Cross-Align at the commit whose data/ the checksums below were computed from.
DEFAULT_URL = ("https://raw.githubusercontent.com/lisasiyu/Cross-Align/"
               "e8b2710c69eeed03e570e4a252af9b4a3a4eef98/data")
FILES = ("test.de-en", "deen.talp")
SHA256 = {
    "test.de-en": "381c87431975e8221252b78018987f70ce007caf8ea00807cf57ed0a45fc9e13",
    "deen.talp": "2985def453f3fbce21d091d5193ec407000ee62e20642502961320a470dacbb2",
}
PAIRS = 508


def fetch_rwth_gold(dest: str | os.PathLike, *, base_url: str = DEFAULT_URL,
                    from_dir: str | os.PathLike | None = None,
                    progress: Callable[[str], None] | None = print) -> dict[str, Path]:
    """Put test.de-en and deen.talp in `dest`; return {file name: path}.

    Files already in `dest` with the right digest are kept (cache). The others are downloaded
    from `{base_url}/{name}`, or copied from the local copy `from_dir`, checked whole first.
    DataError for a failed download, a digest mismatch or an incomplete local copy, and then
    nothing in `dest` changes (see attnlab.data.download).
    """
    return fetch_files(dest, SHA256, base_url=base_url, from_dir=from_dir,
                       dataset="RWTH gold alignment", progress=progress)
