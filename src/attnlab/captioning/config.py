"""The captioning experiment config: `data`, `model`, `train` and `decode` sections (YAML)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnlab.config import between, positive
from attnlab.decode.settings import Overridable
from attnlab.models.config import CaptionerConfig
from attnlab.train.config import ExperimentConfig

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


@dataclass
class DataConfig:
    """A Karpathy-split JSON file (Flickr8k/30k, COCO, or `attnlab data shapes`) + its images.

    Every (image, caption) pair of the training splits is one training example. Images are
    resized (shorter side to `image_size`) and centre-cropped to a square, then normalised
    with mean/std per channel. Relative paths are taken from the current directory.
    """

    json: str = "data/shapes/dataset_shapes.json"
    images: str = "data/shapes/images"  # folder holding each entry's (filepath/)filename
    image_size: int = field(default=64, metadata=positive())
    mean: tuple[float, float, float] = IMAGENET_MEAN
    std: tuple[float, float, float] = IMAGENET_STD
    train_splits: list[str] = field(default_factory=lambda: ["train", "restval"])
    valid_split: str = "val"
    test_split: str = "test"
    # rarer training words become <unk> (Xu et al.: 5 on Flickr)
    min_word_count: int = field(default=1, metadata=positive())
    # tokens; longer captions are truncated (neuraltalk does 16)
    max_caption_len: int = field(default=20, metadata=positive())
    batch_size: int = field(default=32, metadata=positive())  # captions per batch
    # validate on the first N validation images (None = all)
    valid_images: int | None = field(default=200, metadata=positive())
    cache_images: bool = True  # keep every resized image in memory (uint8) after first use
    seed: int = 1  # batch order


@dataclass
class DecodeConfig(Overridable):
    """Beam search for predict/evaluate; validation during training decodes greedily."""

    beam: int = field(default=3, metadata=positive())
    # GNMT length penalty exponent; 0 ranks by log-probability
    alpha: float = field(default=0.0, metadata=between(0, 10))
    # How a hard-attention model reads at test time: the soft expectation (as Xu et al.'s code
    # does) or only its most likely location, a_argmax (a truly hard, deterministic read).
    hard_attention: Literal["expectation", "argmax"] = "expectation"
    max_len: int = field(default=20, metadata=positive())  # output tokens, EOS included
    batch_size: int = field(default=50, metadata=positive())  # images per decoding batch


@dataclass
class RunConfig(ExperimentConfig):
    """A captioning experiment: the YAML sections data, model, train and decode."""

    task: str = "captioning"
    # CaptionTask.validate's figures: captioning.metrics.caption_metrics's (localisation and
    # its companions on images with boxes), loss and perplexity
    validation_metrics = ("loss", "perplexity", "bleu1", "bleu2", "bleu3", "bleu4",
                          "localisation", "localisation_chance", "unmatched_mentions",
                          "localised_words")

    data: DataConfig = field(default_factory=DataConfig)
    model: CaptionerConfig = field(default_factory=CaptionerConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
