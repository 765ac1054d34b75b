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

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, TypeVar

import torch

from attnlab.errors import CheckpointError, ConfigError

from .vocab import BOS_ID, EOS_ID, PAD_ID

B = TypeVar("B", bound="TensorBatch")

BATCH_UNITS = ("sentences", "tokens")


class BucketBatchSampler:
    """Yields lists of example indices; each example exactly once per epoch.

    lengths: per example, an int or a (src_len, tgt_len) pair, counted as they will be padded
    (include EOS/BOS if collate adds them). batch_unit "sentences": at most `batch_size`
    examples per batch. "tokens": batch max length * number of examples <= `batch_size`
    (padding included), except that an example longer than the budget gets a batch alone.

    With shuffle=True, examples are shuffled, cut into pools of `pool_batches` batches, sorted
    by length inside each pool (so a batch holds similar lengths and little padding), batched,
    and the batches shuffled. The order depends only on (seed, epoch). With shuffle=False, all
    examples are sorted by length once and batched in that order, for fast decoding;
    `Batch.indices` restores the original order.
    """

    def __init__(
        self,
        lengths: Sequence[int] | Sequence[tuple[int, int]],
        batch_size: int,
        *,
        batch_unit: str = "sentences",
        shuffle: bool = True,
        seed: int = 0,
        pool_batches: int = 100,
    ):
        if batch_unit not in BATCH_UNITS:
            raise ConfigError(f"unknown batch_unit {batch_unit!r}; options: {list(BATCH_UNITS)}")
        if batch_size < 1 or pool_batches < 1:
            raise ConfigError(f"batch_size and pool_batches must be positive, got "
                              f"{batch_size} and {pool_batches}")
        # Sort key: longest side first, then the pair, so equal keys mean equal padding.
        self._keys = [(max(length), *map(int, length)) if isinstance(length, (tuple, list))
                      else (int(length), int(length)) for length in lengths]
        self.batch_size = batch_size
        self.batch_unit = batch_unit
        self.shuffle = shuffle
        self.seed = seed
        self.pool_batches = pool_batches
        self.epoch = 0
        self.batches_done = 0
        self._cache: tuple[int, list[list[int]]] | None = None

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch to iterate; a different epoch starts from its first batch."""
        if epoch != self.epoch:
            self.epoch, self.batches_done = epoch, 0

    def __len__(self) -> int:
        """Number of batches in the current epoch (token batching can vary by epoch)."""
        return len(self._epoch_batches())

    def __iter__(self) -> Iterator[list[int]]:
        """Yield the current epoch's remaining batches; at the end, move to the next epoch."""
        batches = self._epoch_batches()
        while self.batches_done < len(batches):
            self.batches_done += 1
            yield list(batches[self.batches_done - 1])
        self.epoch, self.batches_done = self.epoch + 1, 0

    def state_dict(self) -> dict:
        """Plain, JSON-able position; the settings are kept to catch resuming on other data."""
        return {"epoch": self.epoch, "batches_done": self.batches_done, "seed": self.seed,
                "num_examples": len(self._keys), "batch_size": self.batch_size,
                "batch_unit": self.batch_unit}

    def load_state_dict(self, state: dict) -> None:
        for key in ("seed", "num_examples", "batch_size", "batch_unit"):
            mine = self.state_dict()[key]
            if key in state and state[key] != mine:
                raise CheckpointError(f"sampler state was saved with {key}={state[key]!r} but "
                                      f"this run has {key}={mine!r}; the batches would differ")
        self.epoch, self.batches_done = int(state["epoch"]), int(state["batches_done"])

    def _epoch_batches(self) -> list[list[int]]:
        if self._cache is None or self._cache[0] != self.epoch:
            self._cache = (self.epoch, self._make_batches(self.epoch))
        return self._cache[1]

    def _make_batches(self, epoch: int) -> list[list[int]]:
        order = list(range(len(self._keys)))
        if not self.shuffle:
            return self._cut(sorted(order, key=self._keys.__getitem__))
        # A local generator seeded by a string: (seed, epoch) pairs never collide, and the
        # global RNG that models and dropout use is neither read nor disturbed.
        rng = random.Random(f"{self.seed}/{epoch}")
        rng.shuffle(order)
        pool = self.pool_batches * self._examples_per_batch()
        batches = []
        for start in range(0, len(order), pool):
            batches += self._cut(sorted(order[start:start + pool], key=self._keys.__getitem__))
        rng.shuffle(batches)
        return batches

    def _examples_per_batch(self) -> int:
        if self.batch_unit == "sentences" or not self._keys:
            return self.batch_size
        mean = sum(key[0] for key in self._keys) / len(self._keys)
        return max(1, int(self.batch_size / max(mean, 1)))

    def _cut(self, indices: list[int]) -> list[list[int]]:
        """Greedily cut length-sorted indices into batches that fit the budget."""
        batches: list[list[int]] = []
        current: list[int] = []
        longest = 0
        for index in indices:
            length = self._keys[index][0]
            if self.batch_unit == "sentences":
                fits = len(current) < self.batch_size
            else:
                fits = max(longest, length) * (len(current) + 1) <= self.batch_size
            if current and not fits:
                batches.append(current)
                current, longest = [], 0
            current.append(index)
            longest = max(longest, length)
        if current:
            batches.append(current)
        return batches


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
    return Batch(
        src=src,
        src_mask=src_mask,
        src_lengths=src_mask.sum(dim=1),
        tgt_in=tgt_in,
        tgt_out=tgt_out,
        tgt_mask=tgt_mask,
        num_target_tokens=int(tgt_mask.sum()),
        indices=list(range(len(examples))) if indices is None else [int(i) for i in indices],
    )


def iterate_batches(
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
    sampler: BucketBatchSampler,
    **collate_options,
) -> Iterator[Batch]:
    """Collated batches of the sampler's current epoch (no DataLoader needed for data in memory)."""
    for batch_indices in sampler:
        yield collate([pairs[i] for i in batch_indices], indices=batch_indices, **collate_options)
