"""Model configuration: the dataclasses `models/build.py` reads (YAML section `model:`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass
class AttentionConfig:
    score: str = "additive"  # a key of attnlab.attention.SCORES
    hidden_dim: int | None = None  # additive score's inner size (default: the query size)
    window: int | None = None  # local attention half-width D; None = global
    predictive: bool = False  # local-p (True) or local-m (False); needs `window`
    max_len: int | None = None  # positions of the `location` score (default: data max length)
    sharpness: float | None = None  # cosine: fixed key strength; None = learned from the query
    hard: bool = False  # stochastic hard attention (Xu et al. 2015), trained with REINFORCE
    expectation_prob: float = 0.5  # hard: probability of using the soft expectation instead
    lambda_r: float = 1.0  # hard: weight of the REINFORCE term
    lambda_e: float = 0.0  # hard: weight of the entropy bonus


@dataclass
class EncoderConfig:
    # rnn: (bi)directional GRU/LSTM; lstmn: Cheng et al. 2016's LSTMN, left to right, whose
    # states are the annotations (shallow fusion; needs bidirectional: false, ignores `rnn`).
    kind: Literal["rnn", "lstmn"] = "rnn"
    rnn: Literal["gru", "lstm"] = "gru"
    embedding_dim: int = 256
    hidden_dim: int = 512  # per direction
    layers: int = 1
    bidirectional: bool = True
    dropout: float = 0.3
    score: str = "additive"  # lstmn: its intra-attention score, a key of attnlab.attention.SCORES
    attention_dim: int | None = None  # lstmn: additive score's inner size (default hidden_dim)


@dataclass
class DecoderConfig:
    # none: Sutskever/Cho (the source only through the final encoder state);
    # bahdanau: attend with s_{t-1}, then update; luong: update, then attend with h_t.
    kind: Literal["none", "bahdanau", "luong"] = "bahdanau"
    rnn: Literal["gru", "lstm"] = "gru"
    embedding_dim: int = 256
    hidden_dim: int = 512
    layers: int = 1
    dropout: float = 0.3
    input_feeding: bool = True  # luong: feed h~_{t-1} into the next step
    output_dim: int | None = None  # deep output (bahdanau) / h~ (luong) size; default below
    tied_embeddings: bool = False  # output layer shares the target embedding matrix
    attention: AttentionConfig = field(default_factory=AttentionConfig)


@dataclass
class ModelConfig:
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    decoder: DecoderConfig = field(default_factory=DecoderConfig)
