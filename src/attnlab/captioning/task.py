"""Captioning as a training task: what `attnlab.train.train` needs from it."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import torch
from torch import nn

from attnlab.data import BucketBatchSampler, Vocab, build_vocab, load_vocab
from attnlab.errors import DataError
from attnlab.models import Captioner, build_captioner, refresh_batch_norm, set_hard_decoding
from attnlab.train.distributed import unwrap
from attnlab.train.runs import model_signature
from attnlab.train.task import LossOutput, Validation
from attnlab.train.validation import perplexity, validation_nll
from attnlab.viz.image_attention import image_attention_figure

from .config import RunConfig
from .data import (
    CaptionBatch,
    CaptionedImage,
    CaptionSplit,
    caption_batch,
    normalise,
    read_karpathy,
)
from .inference import caption_pixels
from .metrics import caption_metrics

TASK = "captioning"
VOCAB_NAME = "vocab"
REFRESH_BATCHES = 20  # training batches that re-estimate batch-norm statistics at validation


def signature(config: RunConfig, vocab_size: int) -> dict:
    """What a checkpoint must match: the model config, vocabulary and image size."""
    return model_signature(TASK, config.model, vocab=vocab_size,
                           image_size=config.data.image_size)


def read_vocab(config: RunConfig, run_dir: Path | None, train: CaptionSplit) -> Vocab:
    """The run's word vocabulary (DataError if it has none), or with run_dir None one built
    from the training captions in memory (`vocab.save(directory, VOCAB_NAME)` writes it)."""
    if run_dir is not None:
        return load_vocab(run_dir, VOCAB_NAME)
    texts = [" ".join(caption) for image in train.images for caption in image.captions]
    if not any(text.strip() for text in texts):
        raise DataError(f"no training captions in {config.data.json}: every caption of the "
                        f"split(s) {', '.join(config.data.train_splits)} is empty")
    return build_vocab("word", texts, size=None, name=VOCAB_NAME,
                       min_freq=config.data.min_word_count)


def check_splits(config: RunConfig, images: list[CaptionedImage],
                 train: list[CaptionedImage], valid: list[CaptionedImage]) -> None:
    """DataError naming the caption file and the split when the training or the validation
    split has no image, or the validation images no caption."""
    data = config.data
    found = ", ".join(sorted({image.split for image in images})) or "none"
    if not train:
        raise DataError(f"no training images in {data.json}: none is in the split(s) "
                        f"{', '.join(data.train_splits)} (its splits: {found})")
    if not valid:
        raise DataError(f"no validation images in {data.json}: none is in the split "
                        f"{data.valid_split!r} (its splits: {found})")
    if not any(caption for image in valid for caption in image.captions):
        raise DataError(f"no validation captions in {data.json}: the images of the split "
                        f"{data.valid_split!r} have no caption")


def in_splits(images: list[CaptionedImage], names: list[str]) -> list[CaptionedImage]:
    return [image for image in images if image.split in names]


class CaptionTask:
    """Reads the captions, builds the vocabulary (or reloads it from `run_dir`; None: built
    from the captions, written only by `save_files`) and the model, and scores it.

    Every (image, caption) pair of the training splits is an example; validation decodes the
    first `data.valid_images` validation images greedily.
    """

    run_files = tuple(f"{VOCAB_NAME}.{ext}" for ext in ("json", "model", "vocab"))
    guides_attention = False  # train.guided_alignment is translation's

    def __init__(self, config: RunConfig, run_dir: str | Path | None, *, log=print):
        self.config, data = config, config.data
        images = read_karpathy(data.json)
        train = in_splits(images, data.train_splits)
        valid = in_splits(images, [data.valid_split])[: data.valid_images]
        check_splits(config, images, train, valid)
        self.train = CaptionSplit(train, data.images, data.image_size, cache=data.cache_images)
        self.valid = CaptionSplit(valid, data.images, data.image_size, cache=data.cache_images)
        self.vocab = read_vocab(config, None if run_dir is None else Path(run_dir), self.train)
        limit = data.max_caption_len
        self.examples = [(index, self.vocab.encode(" ".join(caption[:limit])))
                         for index, image in enumerate(self.train.images)
                         for caption in image.captions]
        log(f"training data: {len(self.examples)} captions of {len(self.train)} images, "
            f"{len(self.vocab)} words; validation: {len(self.valid)} images")
        # pool_batches=1: plain random batches. Length-sorted ones would each hold captions of
        # one template and object count, and pull the model back and forth between them.
        self.sampler = BucketBatchSampler([len(ids) + 1 for _, ids in self.examples],
                                          data.batch_size, shuffle=True, seed=data.seed,
                                          pool_batches=1)
        self.model = build_captioner(config.model, len(self.vocab), data.image_size)
        set_hard_decoding(self.model, config.decode.hard_attention)

    def save_files(self, directory: Path) -> None:
        """Write the vocabulary into the run directory."""
        self.vocab.save(directory, VOCAB_NAME)

    def images(self, pixels: torch.Tensor) -> torch.Tensor:
        """uint8 (B, S, S, 3) -> normalised float (B, 3, S, S)."""
        return normalise(pixels, self.config.data.mean, self.config.data.std)

    def make_batch(self, indices: list[int]) -> CaptionBatch:
        pixels = self.train.store.batch([self.examples[i][0] for i in indices])
        return caption_batch(self.images(pixels), [self.examples[i][1] for i in indices],
                             indices)

    def loss(self, model: nn.Module, batch: CaptionBatch) -> LossOutput:
        out = model(batch.images, batch.tgt_in)
        captioner = cast(Captioner, unwrap(model))
        result = captioner.loss(out, batch.tgt_out, batch.tgt_mask)
        return LossOutput(result.loss, result.nll_sum, result.tokens)

    def refresh_statistics(self, model: Captioner) -> None:
        """Batch-norm statistics for the current weights, from the first training images
        (always the same ones, so that neither the sampler nor any RNG is touched)."""
        device, size = next(model.parameters()).device, self.config.data.batch_size
        count = min(len(self.train), REFRESH_BATCHES * size)
        chunks = [list(range(start, min(start + size, count))) for start in range(0, count, size)]
        batches = (self.images(self.train.store.batch(chunk)).to(device) for chunk in chunks)
        refresh_batch_norm(model.encoder, batches)

    def validation_batches(self):
        """Every (image, caption) pair of the validation images, in batches of
        decode.batch_size (teacher forcing)."""
        limit, size = self.config.data.max_caption_len, self.config.decode.batch_size
        pairs = [(i, self.vocab.encode(" ".join(c[:limit])))
                 for i, image in enumerate(self.valid.images) for c in image.captions]
        for start in range(0, len(pairs), size):
            chunk = pairs[start : start + size]
            pixels = self.valid.store.batch([i for i, _ in chunk])
            yield caption_batch(self.images(pixels), [ids for _, ids in chunk],
                                list(range(len(chunk))))

    def validate(self, model: nn.Module) -> Validation:
        """Loss, greedy BLEU-1..4 and (with boxes) localisation on the validation images, and
        the attention figure of the first one."""
        model.eval()
        captioner = cast(Captioner, model)  # the loop hands back the task's own model, unwrapped
        self.refresh_statistics(captioner)
        nll, tokens = validation_nll(self.loss, model, self.validation_batches())
        loss = nll / max(tokens, 1)
        pixels = self.valid.pixels()
        captions = caption_pixels(captioner, pixels, self.vocab, self.config.data,
                                  self.config.decode.overridden(beam=1))
        words = [c.words for c in captions]
        metrics, _ = caption_metrics(words, [c.attention.numpy() for c in captions],
                                     self.valid.references(), self.valid.boxes(),
                                     self.config.data.image_size)
        metrics.update(loss=loss, perplexity=perplexity(loss))
        first = captions[0]
        images = {}
        if first.words:
            images["attention"] = image_attention_figure(pixels[0].numpy(), first.words,
                                                   first.attention.numpy())
        samples = "\n".join(f"{image.path}: {c.text}"
                            for image, c in zip(self.valid.images[:5], captions, strict=False))
        model.train()
        return Validation(metrics, images, {"samples": samples})

    def signature(self) -> dict:
        return signature(self.config, len(self.vocab))
