"""`attnlab serve`: the attention explorer, a web page and a JSON API over trained runs.

    from attnlab.serve import Limits, create_app
    app = create_app({"dates": "runs/dates"}, Limits(max_beam=8))   # a FastAPI app

Translate requests that arrive together are decoded in one batched beam search (batching.py);
every request is checked against `Limits` first; nothing a request sends is written to disk.
"""

from .app import create_app
from .limits import Limits

__all__ = ["Limits", "create_app"]
