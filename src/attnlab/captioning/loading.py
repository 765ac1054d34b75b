"""A trained captioning run, loaded back to caption, evaluate and plot."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from attnlab.data import Vocab, load_vocab
from attnlab.models import Captioner, build_captioner, set_hard_decoding
from attnlab.train.runs import load_weights, open_run

from .config import RunConfig
from .data import load_image
from .inference import Caption, caption_pixels
from .task import TASK, VOCAB_NAME, signature


@dataclass
class TrainedCaptioner:
    """A run directory's config, vocabulary and model (in eval mode)."""

    config: RunConfig
    vocab: Vocab
    model: Captioner

    def caption_files(self, paths: list[str | Path], *, beam: int | None = None
                      ) -> list[tuple[torch.Tensor, Caption]]:
        """Each image's resized pixels (S, S, 3) uint8 and its beam-search caption."""
        size = self.config.data.image_size
        pixels = torch.stack([torch.from_numpy(load_image(path, size)[0]) for path in paths])
        captions = caption_pixels(self.model, pixels, self.vocab, self.config.data,
                                  self.config.decode, beam=beam)
        return list(zip(pixels, captions, strict=True))


def load_trained(run_dir: str | Path, checkpoint: str | None = None, *,
                 hard_decoding: Literal["expectation", "argmax"] | None = None,
                 device: str | torch.device = "cpu") -> TrainedCaptioner:
    """Load a trained run (`checkpoint`: best, last, or None for best-else-last).
    hard_decoding: "expectation" or "argmax" instead of the run's decode.hard_attention."""
    run = open_run(run_dir, RunConfig, checkpoint, task=TASK)
    config = run.config
    vocab = load_vocab(run.path, VOCAB_NAME)
    model = build_captioner(config.model, len(vocab), config.data.image_size)
    load_weights(run, model, signature(config, len(vocab)), device)
    config.decode.hard_attention = hard_decoding or config.decode.hard_attention
    set_hard_decoding(model, config.decode.hard_attention)
    return TrainedCaptioner(config, vocab, model)
