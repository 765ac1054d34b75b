"""Where a trained captioner looks: one image captioned and drawn word by word."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import torch

from attnlab.errors import ConfigError
from attnlab.files import writing
from attnlab.viz.heatmap import save_figure
from attnlab.viz.image_attention import image_attention_figure

from .data import load_image
from .inference import Caption

if TYPE_CHECKING:
    from .config import DecodeConfig
    from .protocol import CaptioningRunLike


def plot_caption(run: CaptioningRunLike, image: str | Path, output: str | Path,
                 decode: DecodeConfig | None = None) -> tuple[Caption, Path]:
    """Caption one image and draw where each word looked; hard-attention models get the most
    likely location marked (the argmax of alpha_t: what a sample hits most often, and the
    location actually read with decode.hard_attention = argmax)."""
    pixels = torch.from_numpy(load_image(image, run.config.data.image_size)[0])
    caption = run.caption_pixels(pixels[None], decode)[0]
    if not caption.words:
        raise ConfigError(f"the model produced an empty caption for {image}: nothing to plot")
    attention = caption.attention.numpy()
    marks = None
    if run.config.model.decoder.attention.hard:
        width = attention.shape[2]
        flat = attention.reshape(len(caption.words), -1).argmax(-1)
        marks = [(int(i) // width, int(i) % width) for i in flat]
    kind = "hard" if marks is not None else "soft"
    figure = image_attention_figure(pixels.numpy(), caption.words, attention, marks=marks,
                              title=f"{Path(image).name} ({kind} attention)")
    with writing(output):
        return caption, save_figure(figure, output)
