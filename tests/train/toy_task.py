"""A tiny Task for the training-loop tests: next-token prediction on random integer sequences.

The model ties its output layer to the embedding (as many NMT models do: the checkpoint code
must cope with shared tensors) and uses dropout (so an exact resume needs the RNG states).
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, fields

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attnlab.data.batching import BucketBatchSampler
from attnlab.train import LossOutput, Validation


class ToyModel(nn.Module):
    def __init__(self, vocab_size: int, dim: int, dropout: float):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim)
        self.hidden = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(dim, vocab_size)
        self.out.weight = self.embedding.weight   # tied

    def forward(self, tokens):
        # tokens (B, T) -> logits (B, T, V)
        hidden = torch.tanh(self.hidden(self.dropout(self.embedding(tokens))))
        return self.out(self.dropout(hidden))


@dataclass
class ToyBatch:
    inputs: torch.Tensor    # (B, T)
    targets: torch.Tensor   # (B, T)
    mask: torch.Tensor      # (B, T) bool, True = real token
    num_target_tokens: int

    def to(self, device):
        return ToyBatch(**{f.name: getattr(self, f.name).to(device)
                           if isinstance(getattr(self, f.name), torch.Tensor)
                           else getattr(self, f.name) for f in fields(self)})


class ToyTask:
    """Sequences of 3-8 tokens; `interrupt_at`: send SIGINT to ourselves in that loss call;
    `metrics`: scripted validation values of "score" (one per validation)."""

    run_files = ()  # it keeps no files in the run directory
    guides_attention = False

    def __init__(self, *, seed=0, dim=8, vocab_size=11, num_examples=48, batch_size=4,
                 dropout=0.2, interrupt_at=None, metrics=None, images=False):
        generator = torch.Generator().manual_seed(seed)
        lengths = torch.randint(3, 9, (num_examples,), generator=generator).tolist()
        self.sequences = [torch.randint(1, vocab_size, (n,), generator=generator).tolist()
                          for n in lengths]
        torch.manual_seed(seed)
        self.model = ToyModel(vocab_size, dim, dropout)
        self.sampler = BucketBatchSampler(lengths, batch_size, shuffle=True, seed=seed,
                                          pool_batches=2)
        self.dim, self.vocab_size = dim, vocab_size
        self.interrupt_at, self.metrics, self.images = interrupt_at, metrics, images
        self.loss_calls = 0
        self.validations = 0

    def make_batch(self, indices):
        rows = [self.sequences[i] for i in indices]
        longest = max(len(row) for row in rows)
        ids = torch.zeros(len(rows), longest, dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = torch.tensor(row)
        mask = ids[:, 1:] != 0
        return ToyBatch(ids[:, :-1], ids[:, 1:], mask, int(mask.sum()))

    def loss(self, model, batch):
        self.loss_calls += 1
        if self.loss_calls == self.interrupt_at:
            os.kill(os.getpid(), signal.SIGINT)
        logits = model(batch.inputs)                                 # (B, T, V)
        nll = F.cross_entropy(logits.transpose(1, 2), batch.targets, reduction="none")
        nll_sum = (nll * batch.mask).sum()
        return LossOutput(nll_sum / batch.num_target_tokens, nll_sum.item(),
                          batch.num_target_tokens)

    def validate(self, model):
        self.validations += 1
        if self.metrics is not None:
            metrics = {"score": self.metrics[min(self.validations, len(self.metrics)) - 1]}
        else:
            batch = self.make_batch(list(range(8))).to(next(model.parameters()).device)
            metrics = {"loss": self.loss(model, batch).loss.item()}
            self.loss_calls -= 1
        images = {"pattern": np.full((4, 6, 3), 200, dtype=np.uint8)} if self.images else {}
        return Validation(metrics, images=images, text={"sample": "1 2 3"})

    def signature(self):
        return {"model": "ToyModel", "dim": self.dim, "vocab_size": self.vocab_size}

    def save_files(self, directory):
        pass  # no run_files


def parameters(model) -> dict[str, torch.Tensor]:
    return {name: value.detach().clone() for name, value in model.state_dict().items()}



def ddp_worker(rank: int, world_size: int, rendezvous: str, root: str, config,
               timeout_s: float):
    """One rank of a torchrun-like launch (with the environment torchrun sets): a straight
    run to config.max_steps in root/straight, and one stopped at step 5 then resumed in
    root/split. Saves this rank's parameters of both to root/rank<r>.pt.

    The ranks meet through the file `rendezvous` (a FileStore), not a port: there is no free
    port to pick, so none another process can take in between. A collective that waits more
    than `timeout_s` raises instead of hanging. `train` finds the group made and joins it."""
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
    torch.set_num_threads(1)
    import datetime
    from dataclasses import replace

    import torch.distributed as dist

    from attnlab.train import RunDir, train

    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank,
                            world_size=world_size, timeout=datetime.timedelta(seconds=timeout_s))
    runs = [("straight", config, False), ("split", replace(config, max_steps=5), False),
            ("split", config, True)]
    results = {}
    try:
        for name, run_config, resume in runs:
            task = ToyTask()   # reseeds the global RNG: a resume must restore its own state
            result = train(task, run_config, RunDir(f"{root}/{name}"), resume=resume,
                           progress=False)
            results[name] = {"parameters": parameters(task.model), "steps": result.steps,
                             "stopped_by": result.stopped_by}
    finally:
        dist.destroy_process_group()
    torch.save(results, f"{root}/rank{rank}.pt")
