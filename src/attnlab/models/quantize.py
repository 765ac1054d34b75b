"""int8 inference: a trained model with its matrix products in 8-bit integers.

Dynamic quantization (PyTorch's eager `quantize_dynamic`, fbgemm kernels on x86): the weights of
the recurrent layers (nn.GRU, nn.LSTM) and of the linear layers are stored as int8 with one
scale per tensor; activations are quantized on the fly per call. Everything else (embeddings,
attention scores' elementwise work, softmax) stays fp32. Measured here against the other CPU
routes before choosing (benchmarks/decode_speed.py prints the speed and BLEU of both):
torchao 0.18's int8 dynamic config runs ~36x slower than fp32 on this CPU without
torch.compile, and its weight-only config slower than fp32.

Left in fp32, because attnlab's code reads their weights directly rather than calling them:
linear layers with one output (the additive score's v) and everything inside an LSTMN (its
fused layer reads its weight matrices).
"""

from __future__ import annotations

import copy
import warnings

import torch
from torch import nn

from .lstmn import LSTMN

QUANTIZABLE = (nn.Linear, nn.GRU, nn.LSTM)


def quantizable_modules(model: nn.Module) -> set[str]:
    """Qualified names of the modules `quantize_int8` converts."""
    skipped = [name for name, module in model.named_modules() if isinstance(module, LSTMN)]
    return {name for name, module in model.named_modules()
            if isinstance(module, QUANTIZABLE)
            and not (isinstance(module, nn.Linear) and module.out_features == 1)
            and not any(name.startswith(f"{outer}.") for outer in skipped)}


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

        return quantize_dynamic(copied, dict.fromkeys(names, torch.ao.quantization.
                                                       default_dynamic_qconfig),
                                dtype=torch.qint8)
