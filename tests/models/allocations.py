"""Watch every tensor torch allocates in a block: the largest storage made by any operation
(forward and backward alike: a TorchDispatchMode sees both), so a test can show that a run
never builds a (B, T, S) matrix. Views count by the storage they share, so an expand is free.

    with LargestAllocation() as watch:
        model(...).loss.backward()
    assert watch.elements < batch * steps * source_len, watch.where
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class LargestAllocation(TorchDispatchMode):
    """elements: the most elements of any one storage an operation returned inside the block;
    where: that operation and the tensor's shape."""

    def __init__(self) -> None:
        super().__init__()
        self.elements, self.where = 0, ""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tree_leaves(out):
            # a sparse tensor's parts (indices, values) come from operations seen before it
            if (isinstance(tensor, torch.Tensor) and tensor.layout == torch.strided
                    and tensor.element_size()):
                elements = tensor.untyped_storage().nbytes() // tensor.element_size()
                if elements > self.elements:
                    self.elements, self.where = elements, f"{func} -> {tuple(tensor.shape)}"
        return out
