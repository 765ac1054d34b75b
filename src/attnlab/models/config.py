"""Model configuration: the dataclasses `models/build.py` reads (the YAML section `model:`).

One `AttentionConfig` serves every model that attends (translation decoders, the captioner, whose
`CaptionAttentionConfig` adds only the doubly stochastic weight); score names are checked when
the YAML is loaded, so a typo is reported with the closest valid name before anything is built.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Literal

from attnlab.attention import MECHANISMS, mechanism_class, score_class
from attnlab.config import at_least, fraction, positive


def score_name() -> dict[str, object]:
    """Field metadata that makes attnlab.config check a score name (a key of
    attnlab.attention.SCORES) as the YAML loads."""
    return {"check": score_class}


def _mechanism_name(name: object) -> None:
    if name not in MECHANISMS:
        close = difflib.get_close_matches(str(name), list(MECHANISMS), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"choose from {', '.join(MECHANISMS)}"
        raise ValueError(f"unknown mechanism {name!r}; {hint}")


@dataclass
class AttentionConfig:
    score: str = field(default="additive", metadata=score_name())
    # a key of attnlab.attention.MECHANISMS: global | local-m | local-p | hard
    mechanism: str = field(default="global", metadata={"check": _mechanism_name})
    # additive score's inner size (default: the query size)
    hidden_dim: int | None = field(default=None, metadata=positive())
    # local-m, local-p: the window's half-width D (required there, refused elsewhere)
    window: int | None = field(default=None, metadata=at_least(0))
    # positions of the `location` score (default: data max length)
    max_len: int | None = field(default=None, metadata=positive())
    # cosine: fixed key strength; None = learned from the query
    sharpness: float | None = field(default=None, metadata=positive())
    expectation_prob: float = 0.5  # hard: probability of using the soft expectation instead
    lambda_r: float = 1.0  # hard: weight of the REINFORCE term
    lambda_e: float = 0.0  # hard: weight of the entropy bonus

    def __post_init__(self) -> None:
        if self.local and self.window is None:
            raise ValueError(f"mechanism {self.mechanism} needs window (its half-width D, "
                             f"e.g. window: 10)")
        if not self.local and self.window is not None:
            raise ValueError(f"window is the half-width of local-m and local-p; mechanism "
                             f"{self.mechanism} has none (drop window, or set mechanism: "
                             f"local-m or local-p)")

    # What the mechanism is, for the decisions made before a model is built; asked of its class
    # (attnlab.attention.Mechanism), as a built model asks its module.
    @property
    def hard(self) -> bool:
        """The mechanism samples the attended position (hard attention, trained by
        REINFORCE)."""
        return mechanism_class(self.mechanism).samples

    @property
    def local(self) -> bool:
        """The mechanism attends within a window (local-m, local-p)."""
        return mechanism_class(self.mechanism).local

    def describe(self) -> str:
        """The score and mechanism in a few words: "additive, global", "general, local-p
        (D=10)", "dot, hard (REINFORCE)"; what every report, card, page and log says."""
        if self.local:
            return f"{self.score}, {self.mechanism} (D={self.window})"
        if self.hard:
            return f"{self.score}, {self.mechanism} (REINFORCE)"
        return f"{self.score}, {self.mechanism}"


def check_transformer(kind: str, heads: int | None, ff_dim: int | None, embedding_dim: int,
                      hidden_dim: int) -> None:
    """ValueError unless a transformer section has heads dividing hidden_dim (= d_model) and
    embedding_dim == hidden_dim, and another kind leaves heads and ff_dim unset."""
    if kind != "transformer":
        given = [name for name, value in (("heads", heads), ("ff_dim", ff_dim))
                 if value is not None]
        if given:
            raise ValueError(f"{', '.join(given)} belong to kind transformer, "
                             f"not {kind} (drop them, or set kind: transformer)")
        return
    if heads is None:
        raise ValueError("kind transformer needs heads (e.g. heads: 8)")
    if hidden_dim % heads:
        raise ValueError(f"hidden_dim (d_model) {hidden_dim} must be a "
                         f"multiple of heads {heads}: each head gets hidden_dim / heads")
    if embedding_dim != hidden_dim:
        raise ValueError(f"a transformer adds positions to its embeddings and "
                         f"keeps that width, so embedding_dim must equal hidden_dim (d_model), "
                         f"got {embedding_dim} and {hidden_dim}")


@dataclass
class EncoderConfig:
    # rnn: (bi)directional GRU/LSTM; lstmn: Cheng et al. 2016's LSTMN, left to right, whose
    # states are the annotations (shallow fusion; needs bidirectional: false, ignores `rnn`);
    # transformer: Vaswani et al. 2017's self-attention layers, pre-norm (hidden_dim is d_model;
    # reads layers, dropout, heads, ff_dim, positions; ignores rnn, bidirectional, score).
    kind: Literal["rnn", "lstmn", "transformer"] = "rnn"
    rnn: Literal["gru", "lstm"] = "gru"
    embedding_dim: int = field(default=256, metadata=positive())
    hidden_dim: int = field(default=512, metadata=positive())  # per direction
    layers: int = field(default=1, metadata=positive())
    bidirectional: bool = True
    dropout: float = field(default=0.3, metadata=fraction())
    # lstmn: its intra-attention score
    score: str = field(default="additive", metadata=score_name())
    # lstmn: additive score's inner size (default hidden_dim)
    attention_dim: int | None = field(default=None, metadata=positive())
    # transformer: attention heads (required there, refused elsewhere)
    heads: int | None = field(default=None, metadata=positive())
    # transformer: the feed-forward inner size d_ff (default 4 * hidden_dim)
    ff_dim: int | None = field(default=None, metadata=positive())
    # transformer: sinusoidal or learned (data.max_len + 1 of them); the other kinds have none
    positions: Literal["sinusoidal", "learned"] = "sinusoidal"

    def __post_init__(self) -> None:
        check_transformer(self.kind, self.heads, self.ff_dim, self.embedding_dim,
                          self.hidden_dim)


@dataclass
class DecoderConfig:
    # none: Sutskever/Cho (the source only through the final encoder state);
    # bahdanau: attend with s_{t-1}, then update; luong: update, then attend with h_t;
    # transformer: causal self-attention, then cross-attention with scaled_dot heads (Vaswani
    # et al. 2017), pre-norm: hidden_dim is d_model; reads layers, dropout, tied_embeddings,
    # heads, ff_dim, positions; ignores rnn, input_feeding.
    kind: Literal["none", "bahdanau", "luong", "transformer"] = "bahdanau"
    rnn: Literal["gru", "lstm"] = "gru"
    embedding_dim: int = field(default=256, metadata=positive())
    hidden_dim: int = field(default=512, metadata=positive())
    layers: int = field(default=1, metadata=positive())
    dropout: float = field(default=0.3, metadata=fraction())
    input_feeding: bool = True  # luong: feed h~_{t-1} into the next step
    # deep output (bahdanau) / h~ (luong) size; default below
    output_dim: int | None = field(default=None, metadata=positive())
    tied_embeddings: bool = False  # output layer shares the target embedding matrix
    attention: AttentionConfig = field(default_factory=AttentionConfig)
    # transformer: attention heads (required there, refused elsewhere)
    heads: int | None = field(default=None, metadata=positive())
    # transformer: the feed-forward inner size d_ff (default 4 * hidden_dim)
    ff_dim: int | None = field(default=None, metadata=positive())
    # transformer: sinusoidal or learned (data.max_len + 1 of them); the other kinds have none
    positions: Literal["sinusoidal", "learned"] = "sinusoidal"

    def __post_init__(self) -> None:
        check_transformer(self.kind, self.heads, self.ff_dim, self.embedding_dim,
                          self.hidden_dim)
        if self.kind != "transformer":
            return
        if self.attention.score != "scaled_dot" or self.attention.mechanism != "global":
            raise ValueError(f"the transformer's heads use the scaled_dot score, "
                             f"global (Vaswani et al. 2017, eq. 1), got "
                             f"{self.attention.describe()}; set attention: {{score: scaled_dot}}")
        if self.output_dim is not None:
            raise ValueError("the transformer's output layer reads its d_model "
                             "(hidden_dim) features; drop output_dim")


@dataclass
class ModelConfig:
    """A translation model: encoder and decoder."""

    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    decoder: DecoderConfig = field(default_factory=DecoderConfig)


@dataclass
class LanguageModelConfig:
    """The reader between the embedding and the softmax: an LSTMN or a plain LSTM baseline."""

    kind: Literal["lstmn", "lstm"] = "lstmn"
    embedding_dim: int = field(default=256, metadata=positive())
    hidden_dim: int = field(default=256, metadata=positive())
    layers: int = field(default=1, metadata=positive())
    # on embeddings, between layers and before the softmax
    dropout: float = field(default=0.3, metadata=fraction())
    score: str = field(default="additive", metadata=score_name())  # lstmn: intra-attention score
    # lstmn: additive score's inner size (default hidden_dim)
    attention_dim: int | None = field(default=None, metadata=positive())


@dataclass
class ImageEncoderConfig:
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
class CaptionAttentionConfig(AttentionConfig):
    # soft: lambda of the doubly stochastic penalty sum_i (1 - sum_t alpha_ti)^2 (Xu et al.
    # eq. 14); hard attention does not use it, so it must be 0 there.
    doubly_stochastic: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.local:
            raise ValueError(f"mechanism {self.mechanism} reads a sequence from left to right; "
                             f"an image grid takes mechanism global or hard")
        if self.hard and self.doubly_stochastic:
            raise ValueError("doubly_stochastic is the soft-attention penalty; set it to 0 with "
                             "mechanism: hard")
        if self.doubly_stochastic < 0:
            raise ValueError("doubly_stochastic must be >= 0")


@dataclass
class CaptionDecoderConfig:
    """The LSTM decoder of Xu et al. 2015 (sec. 3.1.2) with deep output (eq. 7)."""

    # m: also the size of the deep output L_o's input
    embedding_dim: int = field(default=64, metadata=positive())
    hidden_dim: int = field(default=128, metadata=positive())  # n: LSTM size
    gate: bool = True  # beta_t = sigmoid(f_beta(h_{t-1})) scales the context (sec. 4.2.1)
    dropout: float = field(default=0.0, metadata=fraction())  # on the deep output before L_o
    attention: CaptionAttentionConfig = field(default_factory=CaptionAttentionConfig)


@dataclass
class CaptionerConfig:
    """An image captioner: image encoder and attending LSTM decoder."""

    encoder: ImageEncoderConfig = field(default_factory=ImageEncoderConfig)
    decoder: CaptionDecoderConfig = field(default_factory=CaptionDecoderConfig)
