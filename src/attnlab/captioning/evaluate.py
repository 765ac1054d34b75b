"""Score a trained captioner on a split of its data: BLEU-1..4 and, on shapes, localisation."""

from __future__ import annotations

from attnlab.errors import ConfigError

from .data import CaptionSplit, read_karpathy
from .inference import caption_pixels
from .loading import TrainedCaptioner
from .metrics import caption_metrics


def evaluate_split(trained: TrainedCaptioner, split: str | None = None, *,
                   beam: int | None = None, limit: int | None = None
                   ) -> tuple[dict[str, float], str, int]:
    """Beam-search captions for a split's images (default the test split; the first `limit`)
    -> (metrics, BLEU signature, images scored). See `caption_metrics` for the metrics."""
    data = trained.config.data
    split = split or data.test_split
    images = [image for image in read_karpathy(data.json) if image.split == split][:limit]
    if not images:
        raise ConfigError(f"{data.json} has no images in split {split!r}")
    chosen = CaptionSplit(images, data.images, data.image_size, cache=False)
    captions = caption_pixels(trained.model, chosen.pixels(), trained.vocab, data,
                              trained.config.decode, beam=beam)
    metrics, bleu_signature = caption_metrics(
        [c.words for c in captions], [c.attention.numpy() for c in captions],
        chosen.references(), chosen.boxes(), data.image_size)
    return metrics, bleu_signature, len(images)
