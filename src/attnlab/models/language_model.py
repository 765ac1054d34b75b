"""A next-word language model around a recurrent reader: the LSTMN, or a plain LSTM baseline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from torch import Tensor, nn

from attnlab.attention import max_positions


@dataclass
class ReaderOutput:
    """outputs (B, T, H); weights (L, B, T, T) intra-attention per layer, or None."""

    outputs: Tensor
    weights: Tensor | None = None


class Read(Protocol):
    """What a reader returns (ReaderOutput, attnlab.models.LSTMNOutput)."""

    @property
    def outputs(self) -> Tensor: ...

    @property
    def weights(self) -> Tensor | None: ...


class LSTMReader(nn.Module):
    """nn.LSTM (fused kernels) over right-padded batches. No packing is needed: reading left to
    right, a real position never sees the padding that follows it."""

    def __init__(self, input_dim: int, hidden_dim: int, layers: int, dropout: float):
        super().__init__()
        self.rnn = nn.LSTM(input_dim, hidden_dim, num_layers=layers, batch_first=True,
                           dropout=dropout if layers > 1 else 0.0)

    def forward(self, inputs: Tensor, mask: Tensor) -> ReaderOutput:
        outputs, _ = self.rnn(inputs)  # (B, T, H)
        return ReaderOutput(outputs * mask.unsqueeze(-1))


@dataclass
class LanguageModelOutput:
    """logits for the next token: (N, V) at the N real positions from `forward`, (B, T, V) from
    `all_positions`; attention (L, B, T, T) of an LSTMN, else None."""

    logits: Tensor
    attention: Tensor | None


class LanguageModel(nn.Module):
    """p(w_t | w_<t) = softmax(W_o dropout(h_t) + b), h_t = reader(dropout(E w_<t)).

    forward(inputs (B, T) token ids, mask (B, T) bool) -> LanguageModelOutput with logits (N, V)
    for the N real positions only, in row-major order (as `tensor[mask]`): training never pays
    the output layer for padding. all_positions(inputs, mask): logits (B, T, V) at every
    position. The reader is any module called as reader(embedded (B, T, E), mask) returning
    `.outputs` (B, T, H) and `.weights` (LSTMN, LSTMReader).
    """

    def __init__(self, vocab_size: int, embedding_dim: int, reader: nn.Module, hidden_dim: int,
                 *, dropout: float = 0.0, pad_id: int = 0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.reader = reader
        self.output = nn.Linear(hidden_dim, vocab_size)

    @property
    def max_source_length(self) -> int | None:
        """The most positions (BOS included) the model can read, or None when any length can
        be read: an LSTMN's `location` score addresses only the positions it was built for."""
        return max_positions(self)

    def forward(self, inputs: Tensor, mask: Tensor) -> LanguageModelOutput:
        read = self.read(inputs, mask)
        logits = self.output(self.dropout(read.outputs[mask]))  # (N, V)
        return LanguageModelOutput(logits, read.weights)

    def all_positions(self, inputs: Tensor, mask: Tensor) -> LanguageModelOutput:
        read = self.read(inputs, mask)
        logits = self.output(self.dropout(read.outputs))  # (B, T, V)
        return LanguageModelOutput(logits, read.weights)

    def read(self, inputs: Tensor, mask: Tensor) -> Read:
        """The reader over the embedded inputs: outputs (B, T, H), weights."""
        read: Read = self.reader(self.dropout(self.embedding(inputs)), mask)
        return read


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters (shared tensors counted once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
