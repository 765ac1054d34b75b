"""Score a trained captioner on a split of its data: BLEU-1..4 and, on shapes, localisation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnlab.errors import ConfigError
from attnlab.train.progress import progress_bar

from .data import CaptionSplit, read_karpathy
from .metrics import caption_metrics

if TYPE_CHECKING:
    from .config import DecodeConfig
    from .protocol import CaptioningRunLike


def evaluate_split(run: CaptioningRunLike, split: str | None = None, *,
                   decode: DecodeConfig | None = None, limit: int | None = None,
                   progress: bool = False) -> tuple[dict[str, float], str, int]:
    """Beam-search captions for a split's images (default the test split; the first `limit`)
    -> (metrics, BLEU signature, images scored). See `caption_metrics` for the metrics.
    decode: the search (the run's settings when None; batch_size images a batch); progress: a
    bar on a terminal while it captions."""
    data = run.config.data
    split = split or data.test_split
    images = [image for image in read_karpathy(data.json) if image.split == split][:limit]
    if not images:
        raise ConfigError(f"{data.json} has no images in split {split!r}")
    chosen = CaptionSplit(images, data.images, data.image_size, cache=False)
    decode = decode or run.config.decode
    pixels, captions = chosen.pixels(), []
    with progress_bar(len(images), "captioning", enabled=progress, unit="image") as bar:
        for start in range(0, len(images), decode.batch_size):  # one batch a call
            chunk = pixels[start : start + decode.batch_size]
            captions += run.caption_pixels(chunk, decode)
            bar.update(len(chunk))
    metrics, bleu_signature = caption_metrics(
        [c.words for c in captions], [c.attention.numpy() for c in captions],
        chosen.references(), chosen.boxes(), data.image_size)
    return metrics, bleu_signature, len(images)
