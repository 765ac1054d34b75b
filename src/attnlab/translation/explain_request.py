"""What `explain` is asked, checked before any model runs (the Python API's arguments as the
command line's): one sentence as text, a target the model can write, both within one length
limit, and attribution names it knows. Each refusal is one UserError sentence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attnlab.data.vocab import UNK_ID
from attnlab.errors import UserError

# The most pieces a sentence or a forced target may have: an explanation costs about a
# translation per source piece (erasure) and more per output piece (the gradients), so a long
# text is minutes to hours; the explorer caps its texts at the same 200 (serve.limits).
MAX_PIECES = 200
MAX_STEPS = 1024   # integrated gradients' points one may ask for (`attnlab explain --steps`)


def checked_text(text: Any, what: str, *, empty: bool = False) -> str:
    """`text` when it is one str, non-empty unless `empty` (a forced target may be: the model
    wrote nothing but </s>); else a UserError saying what explain takes."""
    if isinstance(text, (list, tuple)):
        raise UserError(f"explain takes one {what} (a str), got a {type(text).__name__} of "
                        f"{len(text)}: explain each (attnlab explain --input FILE reads a "
                        f"file of them, one JSON line each)")
    if not isinstance(text, str):
        raise UserError(f"explain takes the {what} as a str, got {type(text).__name__}")
    if not empty and not text.strip():
        raise UserError(f"explain needs a {what}: the text is empty")
    return text


def checked_pieces(ids: Sequence[int], pieces: Sequence[str], what: str,
                   unknown_allowed: bool) -> None:
    """Refuse a text past MAX_PIECES pieces, or (a forced target: `unknown_allowed` False) one
    holding pieces the vocabulary lacks, naming them with their positions: the model would be
    explained writing <unk>, not the text asked."""
    if len(ids) > MAX_PIECES:
        raise UserError(f"the {what} has {len(ids):,} pieces; explain reads at most "
                        f"{MAX_PIECES} (each costs about a translation per method)")
    unknown = [(position, piece) for position, (token, piece)
               in enumerate(zip(ids, pieces, strict=False), start=1) if token == UNK_ID]
    if unknown and not unknown_allowed:
        shown = ", ".join(f"{piece!r} (piece {position})" for position, piece in unknown[:8])
        more = f" and {len(unknown) - 8} more" if len(unknown) > 8 else ""
        raise UserError(f"the {what} holds pieces this model cannot write: {shown}{more}; "
                        f"give a target in its vocabulary")


def checked_steps(steps: Any) -> int:
    """Integrated gradients' points: a whole number from 1 to MAX_STEPS (not a bool, a float or
    a str), else a UserError naming the value."""
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise UserError(f"steps (integrated gradients' points) must be a whole number from 1 "
                        f"to {MAX_STEPS}, got {steps!r}")
    return steps
