"""The captioning experiment config: `data`, `model`, `train` and `decode` sections (YAML)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnlab.errors import ConfigError
from attnlab.train.config import TrainConfig

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
    image_size: int = 64
    mean: tuple[float, float, float] = IMAGENET_MEAN
    std: tuple[float, float, float] = IMAGENET_STD
    train_splits: list[str] = field(default_factory=lambda: ["train", "restval"])
    valid_split: str = "val"
    test_split: str = "test"
    min_word_count: int = 1  # rarer training words become <unk> (Xu et al.: 5 on Flickr)
    max_caption_len: int = 20  # tokens; longer captions are truncated (neuraltalk does 16)
    batch_size: int = 32  # captions per batch
    valid_images: int | None = 200  # validate on the first N validation images (None = all)
    cache_images: bool = True  # keep every resized image in memory (uint8) after first use
    seed: int = 1  # batch order


@dataclass
class EncoderConfig:
    """The CNN whose last feature map (h x w x D) gives the L = h*w annotation vectors a_i."""

    kind: Literal["cnn", "resnet"] = "cnn"
    # cnn: one stage per entry (two 3x3 convs, the first with stride 2): each halves the grid.
    channels: list[int] = field(default_factory=lambda: [32, 64, 64])
    # Append each location's (x, y) in [-1, 1] to its annotation: conv features hardly say
    # *where* they are, and naming objects left to right needs it.
    positions: bool = True
    # resnet: torchvision (optional dependency) with weights from a local file, never downloaded.
    resnet: Literal["resnet18", "resnet34", "resnet50", "resnet101", "resnet152"] = "resnet50"
    weights: str | None = None  # a state_dict saved with torch.save (torchvision's .pth files)
    resnet_stages: Literal[3, 4] = 4  # last stage used: 3 gives 14x14 at 224 px, 4 gives 7x7
    fine_tune: bool = False  # train the ResNet too (False: fixed features, as Xu et al.)


@dataclass
class AttentionConfig:
    score: str = "additive"  # a key of attnlab.attention.SCORES
    hidden_dim: int | None = None  # additive score's inner size (default: the LSTM size)
    sharpness: float | None = None  # cosine: fixed key strength; None = learned
    hard: bool = False  # stochastic hard attention trained with REINFORCE (Xu et al. sec. 4.1)
    expectation_prob: float = 0.5  # hard: probability of the soft expectation instead
    lambda_r: float = 1.0  # hard: weight of the REINFORCE term
    lambda_e: float = 0.0  # hard: weight of the entropy bonus
    # soft: lambda of the doubly stochastic penalty sum_i (1 - sum_t alpha_ti)^2 (Xu et al.
    # eq. 14); hard attention does not use it, so it must be 0 there.
    doubly_stochastic: float = 1.0


@dataclass
class DecoderConfig:
    """The LSTM decoder of Xu et al. 2015 (sec. 3.1.2) with deep output (eq. 7)."""

    embedding_dim: int = 64  # m: also the size of the deep output L_o's input
    hidden_dim: int = 128  # n: LSTM size
    gate: bool = True  # beta_t = sigmoid(f_beta(h_{t-1})) scales the context (sec. 4.2.1)
    dropout: float = 0.0  # on the deep output before L_o
    attention: AttentionConfig = field(default_factory=AttentionConfig)

    def __post_init__(self):
        attention = self.attention
        if attention.hard and attention.doubly_stochastic:
            raise ConfigError(
                "model.decoder.attention.doubly_stochastic is the soft-attention penalty; "
                "set it to 0 with hard: true")
        if attention.doubly_stochastic < 0:
            raise ConfigError("model.decoder.attention.doubly_stochastic must be >= 0")


@dataclass
class ModelConfig:
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    decoder: DecoderConfig = field(default_factory=DecoderConfig)


@dataclass
class DecodeConfig:
    """Beam search for predict/evaluate; validation during training decodes greedily."""

    beam: int = 3
    alpha: float = 0.0  # GNMT length penalty exponent; 0 ranks by log-probability
    # How a hard-attention model reads at test time: the soft expectation (as Xu et al.'s code
    # does) or only its most likely location, a_argmax (a truly hard, deterministic read).
    hard_attention: Literal["expectation", "argmax"] = "expectation"
    max_len: int = 20  # output tokens, EOS included
    batch_size: int = 50  # images per decoding batch


@dataclass
class RunConfig:
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
