"""A progress bar where one is wanted: on a terminal, never in a pipe, a log file or CI.

    with progress_bar(total=len(sentences), desc="translating", enabled=progress) as bar:
        for batch in batches:
            ...
            bar.update(len(batch))

Every long job of the library (decoding a test set, forced alignment, perplexity, scoring a
suite member) takes `progress: bool` and counts through this one function, so whether a bar is
drawn is decided in one place: `enabled` (the caller's wish, e.g. not --quiet) and a terminal on
standard error.
"""

from __future__ import annotations

import sys


def wanted(enabled: bool = True) -> bool:
    """Whether a bar would be drawn: `enabled` and standard error is a terminal."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(enabled and isatty is not None and isatty())


def progress_bar(total: int | None = None, desc: str | None = None, *, enabled: bool = True,
                 unit: str = "it"):
    """A tqdm bar on standard error counting to `total` (None: a count without an ETA), or,
    when not `wanted(enabled)`, a silent one with the same calls (update, close, `with`).
    The bar is cleared when it closes, so the results printed after it stand alone."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                dynamic_ncols=True, disable=not wanted(enabled))
