"""Bidirectional RNN encoder: the annotations h_i = [h_i(forward); h_i(backward)]
(docs/equations.md, "Notation")."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .rnn import State, make_rnn, run_rnn


@dataclass
class EncoderOutput:
    """annotations (B, S, D) with D = hidden * directions; mask (B, S) bool, True = real token;
    final: the RNN's last state tuple, each (layers * directions, B, H); `summary` (B, D) is the
    top layer's [last forward state; first backward state] (Bahdanau's h_1(backward) is its
    second half)."""

    annotations: Tensor
    mask: Tensor
    final: State
    summary: Tensor


class RNNEncoder(nn.Module):
    """Embedding, dropout, then a (bi)directional GRU/LSTM run over packed sequences (over the
    batch as it is when no sentence is padded)."""

    def __init__(self, vocab_size: int, embedding_dim: int, hidden_dim: int, *, layers: int = 1,
                 bidirectional: bool = True, rnn: str = "gru", dropout: float = 0.0,
                 pad_id: int = 0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.rnn = make_rnn(rnn, embedding_dim, hidden_dim, layers, dropout, bidirectional)
        self.directions = 2 if bidirectional else 1
        self.output_dim = hidden_dim * self.directions

    def forward(self, src: Tensor, src_mask: Tensor) -> EncoderOutput:
        """src (B, S) token ids; src_mask (B, S) bool. Every sentence needs >= 1 real token."""
        embedded = self.dropout(self.embedding(src))  # (B, S, E)
        if bool(src_mask.all()):  # nothing padded: packing would only cost (a copy per step)
            annotations, final = run_rnn(self.rnn, embedded, None)
        else:
            lengths = src_mask.sum(-1).cpu()
            packed = pack_padded_sequence(embedded, lengths, batch_first=True,
                                          enforce_sorted=False)
            outputs, final = run_rnn(self.rnn, packed, None)
            annotations, _ = pad_packed_sequence(outputs, batch_first=True,
                                                 total_length=src.shape[1])  # (B, S, D)
        top = final[0][-self.directions:]  # (directions, B, H): forward last, backward first
        summary = torch.cat(list(top), dim=-1)  # (B, D)
        return EncoderOutput(self.dropout(annotations), src_mask, final, summary)
