"""int8 inference: a trained model with its matrix products in 8-bit integers.

Dynamic quantization (PyTorch's eager `quantize_dynamic`, fbgemm kernels on x86): the weights of
the recurrent layers (nn.GRU, nn.LSTM) and of the linear layers are stored as int8 with one
scale per tensor; activations are quantized on the fly per call. Everything else (embeddings,
attention scores' elementwise work, softmax) stays fp32. Measured here against the other CPU
routes before choosing (benchmarks/decode_speed.py prints the speed and BLEU of both):
torchao 0.18's int8 dynamic config runs ~36x slower than fp32 on this CPU without
torch.compile, and its weight-only config slower than fp32.

Each module concerned says what must stay fp32 (it is a `KeepsFP32`): `fp32_submodules` names
(as attributes) the submodules its code reads the weights of rather than calling them (the
additive score's v, the fused LSTMN layers) and its one-output layers (gates), where int8 has
nothing to speed up. They and everything inside them stay fp32. Every Score declares it (()
by default), as do LocalAttention, the LSTMN and the captioner's decoder.
"""

from __future__ import annotations

import copy
import warnings
from typing import Protocol, runtime_checkable

import torch
from torch import nn

QUANTIZABLE = (nn.Linear, nn.GRU, nn.LSTM)


@runtime_checkable
class KeepsFP32(Protocol):
    """A module that names (as its attributes) the submodules int8 must leave in fp32."""

    fp32_submodules: tuple[str, ...]


def fp32_names(model: nn.Module) -> list[str]:
    """Qualified names of the submodules that the modules of `model` ask to keep in fp32."""
    return [f"{name}.{sub}" if name else sub for name, module in model.named_modules()
            if isinstance(module, KeepsFP32) for sub in module.fp32_submodules]


def quantizable_modules(model: nn.Module) -> set[str]:
    """Qualified names of the modules `quantize_int8` converts."""
    kept = fp32_names(model)
    return {name for name, module in model.named_modules()
            if isinstance(module, QUANTIZABLE)
            and not any(name == outer or name.startswith(f"{outer}.") for outer in kept)}


def quantize_int8(model: nn.Module) -> nn.Module:
    """An int8 copy of `model` for CPU inference (eval mode); `model` itself is left as it was.
    Forward and decoding work as before; training it is not supported."""
    names = quantizable_modules(model)
    if not names:
        raise ValueError("this model has no linear or recurrent layer that int8 can take")
    copied = copy.deepcopy(model).eval()
    with warnings.catch_warnings():
        # torch marks its eager quantization API deprecated in favour of torchao, whose CPU int8
        # path is far slower here (see the module docstring); the API still works in torch 2.13.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        from torch.ao.quantization import quantize_dynamic

        qconfig = torch.ao.quantization.default_dynamic_qconfig
        quantized: nn.Module = quantize_dynamic(  # type: ignore[no-untyped-call]  # untyped in torch
            copied, dict.fromkeys(names, qconfig), dtype=torch.qint8)
        return quantized
