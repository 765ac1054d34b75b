"""Small helpers that let GRU and LSTM share one code path.

An RNN state is always a tuple: (h,) for a GRU, (h, c) for an LSTM, each (layers, B, H).
"""

from __future__ import annotations

from typing import TypeVar

from torch import Tensor, nn
from torch.nn.utils.rnn import PackedSequence

RNN_TYPES = {"gru": nn.GRU, "lstm": nn.LSTM}

State = tuple[Tensor, ...]
Steps = TypeVar("Steps", Tensor, PackedSequence)  # what an RNN reads: padded or packed


def make_rnn(kind: str, input_size: int, hidden_size: int, layers: int, dropout: float,
             bidirectional: bool = False) -> nn.RNNBase:
    """A batch-first GRU/LSTM; dropout between layers only when there is more than one."""
    rnn: nn.RNNBase = RNN_TYPES[kind](input_size, hidden_size, num_layers=layers,
                                      batch_first=True, dropout=dropout if layers > 1 else 0.0,
                                      bidirectional=bidirectional)
    return rnn


def run_rnn(rnn: nn.RNNBase, inputs: Steps, state: State | None) -> tuple[Steps, State]:
    """inputs (B, T, I) (or packed), state tuple or None -> outputs (B, T, H) (or packed),
    new state tuple."""
    # `mode`, not isinstance: an int8 (dynamically quantized) LSTM is not an nn.LSTM.
    packed_state = None if state is None else (state if rnn.mode == "LSTM" else state[0])
    outputs, new_state = rnn(inputs, packed_state)
    return outputs, (new_state if isinstance(new_state, tuple) else (new_state,))


def top_layer(state: State) -> Tensor:
    """The top layer's hidden state h: (B, H)."""
    return state[0][-1]
