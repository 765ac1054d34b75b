"""Length-bucketed, resumable batches of example indices, and padding them into tensors.

    sampler = BucketBatchSampler(lengths, batch_size=4096, batch_unit="tokens", seed=1)
    for batch in iterate_batches(encoded_pairs, sampler):   # one epoch
        ...                                                  # batch.src (B, S), ...
    checkpoint["sampler"] = sampler.state_dict()             # resume mid-epoch later

The sampler is also a valid `batch_sampler=` for torch's DataLoader. With worker processes the
loader draws batches ahead of training, so `batches_done` then counts batches handed to the
loader; for an exact resume, save the number of batches the training loop actually used.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, TypeVar

import numpy as np
import torch

from .sampler import BATCH_UNITS, BucketBatchSampler
from .vocab import BOS_ID, EOS_ID, PAD_ID

B = TypeVar("B", bound="TensorBatch")

__all__ = ["BATCH_UNITS", "Batch", "BucketBatchSampler", "TensorBatch", "collate",
           "collate_flat", "iterate_batches"]


class TensorBatch:
    """Base of every batch dataclass (translation, captioning, language modelling): `.to()`
    moves each tensor field and keeps the others."""

    # Declared, not set: each subclass is a dataclass, which sets it (and makes this type one
    # that dataclasses.fields and replace accept).
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def to(self: B, device: torch.device | str) -> B:
        """A copy with every tensor on `device`."""
        moved = {f.name: getattr(self, f.name).to(device) for f in fields(self)
                 if isinstance(getattr(self, f.name), torch.Tensor)}
        return replace(self, **moved)


@dataclass
class Batch(TensorBatch):
    """Padded tensors for B sentence pairs; S = longest source, T = longest target + 1.

    src (B, S) long, src_mask (B, S) bool (True = real token), src_lengths (B,) long;
    tgt_in (B, T) = BOS + target (decoder input), tgt_out (B, T) = target + EOS (labels),
    tgt_mask (B, T) bool; num_target_tokens = tgt_mask.sum(), for per-token loss;
    indices: the B example indices, to put outputs back in corpus order.
    """

    src: torch.Tensor
    src_mask: torch.Tensor
    src_lengths: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    tgt_mask: torch.Tensor
    num_target_tokens: int
    indices: list[int]


def _pad(sequences: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad to the longest: ids (B, L) long and mask (B, L) bool, True = real token."""
    longest = max((len(s) for s in sequences), default=0)
    ids = torch.full((len(sequences), longest), pad_id, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
    lengths = torch.tensor([len(s) for s in sequences], dtype=torch.long)
    mask = torch.arange(longest).unsqueeze(0) < lengths.unsqueeze(1)   # (B, L)
    return ids, mask


def collate(
    examples: Sequence[tuple[Sequence[int], Sequence[int]]],
    *,
    indices: Sequence[int] | None = None,
    pad_id: int = PAD_ID,
    src_eos: bool = True,
) -> Batch:
    """Pad B (src_ids, tgt_ids) pairs (ids without BOS/EOS) into a Batch.

    The source gets EOS appended when `src_eos` (common NMT practice: the encoder sees where
    the sentence ends). `indices` default to 0..B-1.
    """
    sources = [[*map(int, src), *([EOS_ID] if src_eos else [])] for src, _ in examples]
    src, src_mask = _pad(sources, pad_id)                                  # (B, S)
    tgt_in, tgt_mask = _pad([[BOS_ID, *map(int, tgt)] for _, tgt in examples], pad_id)  # (B, T)
    tgt_out, _ = _pad([[*map(int, tgt), EOS_ID] for _, tgt in examples], pad_id)        # (B, T)
    return _batch(src, src_mask, tgt_in, tgt_out, tgt_mask,
                  list(range(len(examples))) if indices is None else [int(i) for i in indices])


def collate_flat(
    src: tuple[np.ndarray, np.ndarray],
    tgt: tuple[np.ndarray, np.ndarray],
    indices: Sequence[int] | np.ndarray,
    *,
    pad_id: int = PAD_ID,
    src_eos: bool = True,
) -> Batch:
    """The Batch `collate` makes of pairs `indices`, read straight from flat token arrays.

    src and tgt: (tokens, offsets), tokens (total,) of any integer type (a numpy memmap too),
    offsets (N + 1,) int64: pair i's ids are tokens[offsets[i]:offsets[i + 1]]. Only those B
    slices are read, and no Python object is made per token.
    """
    rows = np.asarray(indices, dtype=np.int64)
    src_ids, src_mask = _pad_flat(*src, rows, None, EOS_ID if src_eos else None, pad_id)
    tgt_in, tgt_mask = _pad_flat(*tgt, rows, BOS_ID, None, pad_id)      # (B, T)
    tgt_out, _ = _pad_flat(*tgt, rows, None, EOS_ID, pad_id)            # (B, T)
    return _batch(src_ids, src_mask, tgt_in, tgt_out, tgt_mask, rows.tolist())


def _batch(src: torch.Tensor, src_mask: torch.Tensor, tgt_in: torch.Tensor,
           tgt_out: torch.Tensor, tgt_mask: torch.Tensor, indices: list[int]) -> Batch:
    """A Batch of padded (B, S) and (B, T) tensors, with the lengths and counts they imply."""
    return Batch(src=src, src_mask=src_mask, src_lengths=src_mask.sum(dim=1), tgt_in=tgt_in,
                 tgt_out=tgt_out, tgt_mask=tgt_mask, num_target_tokens=int(tgt_mask.sum()),
                 indices=indices)


def _pad_flat(tokens: np.ndarray, offsets: np.ndarray, rows: np.ndarray, first: int | None,
              last: int | None, pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows' slices with `first` before and `last` after each (None: nothing), right-padded:
    ids (B, L) long and mask (B, L) bool, True = real token."""
    starts = offsets[rows].astype(np.int64)
    lengths = offsets[rows + 1].astype(np.int64) - starts                 # (B,)
    lead = int(first is not None)
    widths = lengths + lead + int(last is not None)
    column = np.arange(int(widths.max(initial=0)))                        # (L,)
    body = (column >= lead) & (column < (lengths + lead)[:, None])        # (B, L)
    ids = np.full(body.shape, pad_id, dtype=np.int64)
    ids[body] = tokens[(starts[:, None] + column - lead)[body]]
    if first is not None and ids.shape[1]:
        ids[:, 0] = first
    if last is not None:
        ids[np.arange(len(rows)), lengths + lead] = last
    return torch.from_numpy(ids), torch.from_numpy(column < widths[:, None])


def iterate_batches(
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
    sampler: BucketBatchSampler,
    **collate_options,
) -> Iterator[Batch]:
    """Collated batches of the sampler's current epoch (no DataLoader needed for data in memory)."""
    for batch_indices in sampler:
        yield collate([pairs[i] for i in batch_indices], indices=batch_indices, **collate_options)
