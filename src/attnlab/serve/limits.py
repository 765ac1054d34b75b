"""What one server accepts and how much work it holds: the limits every request is checked
against, the micro-batcher's settings, and what one explanation may cost."""

from __future__ import annotations

from dataclasses import dataclass, fields

from attnlab.errors import ConfigError


@dataclass(frozen=True)
class Limits:
    """Caps on a request and on the work queue (all must be positive)."""

    max_tokens: int = 200  # source pieces of one text (translate, read)
    max_upload_bytes: int = 5 * 1024 * 1024  # any request body, image uploads included
    max_pixels: int = 25_000_000  # width x height of an uploaded image, read from its header
    max_beam: int = 16
    queue_size: int = 128  # requests waiting for the worker; past it: 503
    batch_window_ms: float = 5.0  # how long the first request of a batch waits for company
    max_batch: int = 64  # sentences decoded together in one beam search
    max_explain_steps: int = 64  # integrated gradients' points an explain request may ask for
    # seconds one explanation may take (it holds the one worker: every other request waits)
    explain_budget_s: float = 30.0

    def __post_init__(self):
        for field in fields(self):
            value = getattr(self, field.name)
            if not value > 0:
                raise ConfigError(f"limit {field.name} must be positive, got {value}")
