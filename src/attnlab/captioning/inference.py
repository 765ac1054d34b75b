"""Caption images with a trained Captioner: beam search (attnlab.decode) and its attention."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from attnlab.data import EOS_ID, Vocab
from attnlab.decode import beam_search
from attnlab.models import Captioner
from attnlab.viz.notebook import Displayed, View, caption_view

from .config import DataConfig, DecodeConfig
from .data import normalise


@dataclass(repr=False)
class Caption(Displayed):
    """One generated caption: words (EOS dropped); attention (len(words), h, w): alpha_t of
    the step that produced each word, on the annotation grid; log_prob of the tokens; image:
    (S, S, 3) uint8, the square the model saw, when it was captioned from pixels.

    In a notebook it draws as the explorer's view (each word's attention over the image);
    `repr` is a plain summary."""

    words: list[str]
    attention: Tensor
    log_prob: float
    image: np.ndarray | None = None

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def weights(self) -> np.ndarray:
        """The attention as numpy: (len(words), h, w)."""
        return self.attention.float().numpy()

    def _view(self) -> View:
        return caption_view(self.words, self.weights, self.image)


def caption_images(model: Captioner, images: Tensor, vocab: Vocab,
                   decode: DecodeConfig | None = None) -> list[Caption]:
    """Caption normalised images (B, 3, H, W) with beam search as `decode` says (DecodeConfig's
    defaults when None); the best hypothesis of each, in order."""
    decode = decode or DecodeConfig()
    height, width = model.grid_size(images.shape[2], images.shape[3])
    # every location of the grid may be attended to
    mask = torch.ones(images.shape[0], height * width, dtype=torch.bool, device=images.device)
    results = beam_search(model, images, mask, beam_size=decode.beam, alpha=decode.alpha,
                          max_len=decode.max_len)
    captions = []
    for (best,) in results:
        ids = best.tokens[:-1] if best.tokens and best.tokens[-1] == EOS_ID else best.tokens
        if best.attention is None:  # a captioner always attends; a model that does not is a bug
            raise TypeError(f"{type(model).__name__} returned no attention weights")
        attention = best.attention[: len(ids)].reshape(len(ids), height, width).cpu()
        captions.append(Caption([vocab.id_to_piece(i) for i in ids], attention, best.log_prob))
    return captions


def caption_pixels(model: Captioner, pixels: Tensor, vocab: Vocab, data: DataConfig,
                   decode: DecodeConfig) -> list[Caption]:
    """Caption resized images (N, S, S, 3) uint8 in batches of decode.batch_size."""
    device = next(model.parameters()).device
    captions: list[Caption] = []
    for start in range(0, pixels.shape[0], decode.batch_size):
        square = pixels[start : start + decode.batch_size]
        chunk = normalise(square, data.mean, data.std)
        found = caption_images(model, chunk.to(device), vocab, decode)
        for caption, image in zip(found, square, strict=True):
            caption.image = image.numpy()   # what the model saw, for its view
        captions += found
    return captions
