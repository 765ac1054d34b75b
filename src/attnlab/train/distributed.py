"""Data-parallel training under `torchrun`, and the same calls as no-ops in one process.

torchrun sets RANK, WORLD_SIZE and LOCAL_RANK (and MASTER_ADDR/PORT); `setup` then joins the
process group (gloo on CPU, nccl on CUDA). Every rank builds the same sampler with the same
seed and takes every world_size-th batch of its order, so the ranks never need to exchange
data, and DistributedDataParallel all-reduces (averages) the gradients.

Several nodes run the same command, each its own torchrun meeting the others through a c10d
rendezvous (tests/train/test_multinode.py runs two on one host):

    torchrun --nnodes 2 --nproc_per_node N --rdzv_backend c10d --rdzv_endpoint HOST:PORT \
        --rdzv_id JOB -m attnlab train CONFIG --run-dir DIR

Rank 0 alone writes the run directory, and every rank reads it (the vocabularies rank 0 wrote,
`last` when resuming), so DIR and the data lie on storage every node sees at the same path.
The run directory is spelt --run-dir there: torchrun takes a bare --run for its --run-path.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from .device import resolve_device


@dataclass
class DistContext:
    """Where this process stands: rank r of world_size, training on `device`."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")
    owns_group: bool = False   # we initialised the process group, so we destroy it

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1


def setup(device: str | None = None) -> DistContext:
    """Join the process group when launched by torchrun; pick this rank's device.

    device: "cpu", "cuda", "cuda:N", or "auto" (or None) for CUDA when available. Under
    torchrun, plain "cuda" means cuda:LOCAL_RANK. A process group made beforehand (one meeting
    through a file store, say, as the tests' is) is joined as it is, and left to its maker to
    destroy.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    chosen = resolve_device(device)   # that rule, and a missing GPU as one sentence
    if chosen.type == "cuda":
        torch.cuda.set_device(chosen)
    owns = False
    if world_size > 1 and not dist.is_initialized():
        # Validation runs on rank 0 alone while the others wait in a collective: allow it
        # far longer than the default timeout (10 minutes for nccl).
        dist.init_process_group("nccl" if chosen.type == "cuda" else "gloo",
                                timeout=datetime.timedelta(hours=2))
        owns = True
    if dist.is_initialized():
        return DistContext(dist.get_rank(), dist.get_world_size(), local_rank, chosen, owns)
    return DistContext(device=chosen)


def teardown(context: DistContext) -> None:
    if context.owns_group and dist.is_initialized():
        dist.destroy_process_group()


def wrap_model(model: nn.Module, context: DistContext) -> nn.Module:
    """DDP-wrap the model (already on its device); it broadcasts rank 0's parameters."""
    if not context.is_distributed:
        return model
    device_ids = [context.device.index] if context.device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids)


def unwrap(model: nn.Module) -> nn.Module:
    return model.module if isinstance(model, DistributedDataParallel) else model


def rank_batches(batches: Iterable[list[int]], context: DistContext) -> Iterator[list[int]]:
    """This rank's share: batch r of each complete group of world_size batches.

    The incomplete last group is dropped (still drawn from the sampler, so its position stays
    the same on every rank), because a rank with one step more would wait forever for the
    others' gradients.
    """
    group = []
    for batch in batches:
        group.append(batch)
        if len(group) == context.world_size:
            yield group[context.rank]
            group = []


def any_rank(context: DistContext, *flags: bool) -> list[bool]:
    """Per flag, whether it is set on any rank, so that every rank takes the same decision."""
    if not context.is_distributed:
        return list(flags)
    values = torch.tensor([float(f) for f in flags], device=context.device)
    dist.all_reduce(values, op=dist.ReduceOp.MAX)
    return [bool(v) for v in values.tolist()]


def sum_ranks(context: DistContext, *numbers: float) -> list[float]:
    """Per number, its sum over the ranks (e.g. tokens processed)."""
    if not context.is_distributed:
        return list(numbers)
    values = torch.tensor(numbers, dtype=torch.float64, device=context.device)
    dist.all_reduce(values)
    return values.tolist()


def broadcast(context: DistContext, obj):
    """Rank 0's `obj` on every rank (a small picklable object, e.g. a metrics dict)."""
    if not context.is_distributed:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def gather(context: DistContext, obj) -> list:
    """Every rank's `obj`, in rank order, on every rank."""
    if not context.is_distributed:
        return [obj]
    boxes = [None] * context.world_size
    dist.all_gather_object(boxes, obj)
    return boxes


def barrier(context: DistContext) -> None:
    if context.is_distributed:
        dist.barrier()
