"""Length-bucketed, resumable batches of example indices, computed with numpy.

    sampler = BucketBatchSampler(lengths, batch_size=4096, batch_unit="tokens", seed=1)
    for indices in sampler:                                  # one epoch of index lists
        ...
    checkpoint["sampler"] = sampler.state_dict()             # resume mid-epoch later

The sampler holds the lengths as numpy arrays and each epoch as three arrays (the examples in
batch order, where each batch starts, and the order of the batches), so a corpus of millions
of pairs costs tens of megabytes here and never one Python object per sentence.

The sampler is also a valid `batch_sampler=` for torch's DataLoader. With worker processes the
loader draws batches ahead of training, so `batches_done` then counts batches handed to the
loader; for an exact resume, save the number of batches the training loop actually used.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from attnlab.errors import CheckpointError, ConfigError

BATCH_UNITS = ("sentences", "tokens")


class Permutations(Protocol):
    """One epoch's source of random orders (made from a seed and an epoch), drawn twice:
    the examples' order, then the batches'."""

    def permutation(self, n: int) -> np.ndarray: ...


def index_dtype(n: int) -> type:
    """int32 for the indices of fewer than 2**31 examples (half the memory of int64)."""
    return np.int32 if n < 2**31 else np.int64


class Pcg64Order:
    """Random permutations from numpy's PCG64 bit stream (a fixed algorithm, so the same on
    every numpy version), seeded by the string "seed/epoch": (seed, epoch) pairs never collide
    and neither Python's nor numpy's global generator is read or disturbed."""

    def __init__(self, seed: int, epoch: int):
        digest = hashlib.sha256(f"{seed}/{epoch}".encode()).digest()
        entropy = int.from_bytes(digest[:16], "little")
        self.bits = np.random.PCG64(np.random.SeedSequence(entropy))

    def permutation(self, n: int) -> np.ndarray:
        """A uniform random order of range(n), (n,) of index_dtype(n): sort random keys whose
        low bits are the index itself, so no two keys tie and any sort gives this order."""
        low = max(n - 1, 1).bit_length()
        mask = np.uint64((1 << low) - 1)
        keys = self.bits.random_raw(n)
        keys &= ~mask
        for start in range(0, n, 2**20):   # a million at a time: no second (n,) array
            keys[start:start + 2**20] |= np.arange(start, min(start + 2**20, n), dtype=np.uint64)
        keys.sort()
        keys &= mask
        return keys.astype(index_dtype(n))


# How an epoch's examples and batches are shuffled; a checkpoint names the one it used.
ORDERS: dict[str, Callable[[int, int], Permutations]] = {"pcg64": Pcg64Order}
DEFAULT_ORDER = "pcg64"


@dataclass
class EpochBatches:
    """One epoch: `examples` (N,) in batch order, batch b is examples[starts[b]:starts[b + 1]]
    (starts has one more entry, N, at the end), and batch i of the epoch is batch sequence[i]."""

    examples: np.ndarray
    starts: np.ndarray
    sequence: np.ndarray

    def __len__(self) -> int:
        return len(self.sequence)

    def batch(self, i: int) -> np.ndarray:
        b = self.sequence[i]
        return self.examples[self.starts[b]:self.starts[b + 1]]


class BucketBatchSampler:
    """Yields lists of example indices; each example exactly once per epoch.

    lengths: per example, an int or a (src_len, tgt_len) pair, counted as they will be padded
    (include EOS/BOS if collate adds them); a list, or a numpy array (N,) or (N, 2).
    batch_unit "sentences": at most `batch_size` examples per batch. "tokens": batch max
    length * number of examples <= `batch_size` (padding included), except that an example
    longer than the budget gets a batch alone.

    With shuffle=True, examples are shuffled, cut into pools of `pool_batches` batches, sorted
    by length inside each pool (longest side first, then the pair; ties keep the shuffled
    order), batched, and the batches shuffled. The order depends only on (seed, epoch) and
    `order` (a key of ORDERS). With shuffle=False, all examples are sorted by length once and
    batched in that order, for fast decoding; `Batch.indices` restores the original order.
    """

    def __init__(
        self,
        lengths: Sequence[int] | Sequence[tuple[int, int]] | np.ndarray,
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
        self._keys = sort_keys(lengths)
        self.batch_size = batch_size
        self.batch_unit = batch_unit
        self.shuffle = shuffle
        self.seed = seed
        self.pool_batches = pool_batches
        self.order = DEFAULT_ORDER
        self.epoch = 0
        self.batches_done = 0
        self._cache: tuple[int, EpochBatches] | None = None

    @property
    def num_examples(self) -> int:
        return len(self._keys[0])

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch to iterate; a different epoch starts from its first batch."""
        if epoch != self.epoch:
            self.epoch, self.batches_done = epoch, 0

    def __len__(self) -> int:
        """Number of batches in the current epoch (token batching can vary by epoch)."""
        return len(self.epoch_batches())

    def __iter__(self) -> Iterator[list[int]]:
        """Yield the current epoch's remaining batches; at the end, move to the next epoch."""
        batches = self.epoch_batches()
        while self.batches_done < len(batches):
            self.batches_done += 1
            yield batches.batch(self.batches_done - 1).tolist()
        self.epoch, self.batches_done = self.epoch + 1, 0

    def state_dict(self) -> dict:
        """Plain, JSON-able position; the settings are kept to catch resuming on other data."""
        return {"epoch": self.epoch, "batches_done": self.batches_done, "seed": self.seed,
                "num_examples": self.num_examples, "batch_size": self.batch_size,
                "batch_unit": self.batch_unit, "order": self.order}

    def load_state_dict(self, state: dict) -> None:
        for key in ("seed", "num_examples", "batch_size", "batch_unit"):
            mine = self.state_dict()[key]
            if key in state and state[key] != mine:
                raise CheckpointError(f"sampler state was saved with {key}={state[key]!r} but "
                                      f"this run has {key}={mine!r}; the batches would differ")
        order = state.get("order")
        if order not in ORDERS:
            raise CheckpointError(f"sampler state was saved with order={order!r}, which this "
                                  f"version does not know; options: {sorted(ORDERS)}")
        self.order, self._cache = order, None
        self.epoch, self.batches_done = int(state["epoch"]), int(state["batches_done"])

    def epoch_batches(self) -> EpochBatches:
        """The current epoch's batches (computed once per epoch)."""
        if self._cache is None or self._cache[0] != self.epoch:
            self._cache = (self.epoch, self._make_batches(self.epoch))
        return self._cache[1]

    def _make_batches(self, epoch: int) -> EpochBatches:
        n = self.num_examples
        if not self.shuffle:
            examples = sort_pools(np.arange(n, dtype=index_dtype(n)), self._keys, max(n, 1))
            starts = self._cut(examples, max(n, 1))
            return EpochBatches(examples, starts, np.arange(len(starts) - 1))
        source = ORDERS[self.order](self.seed, epoch)
        pool = self.pool_batches * self._examples_per_batch()
        examples = sort_pools(source.permutation(n), self._keys, pool)
        starts = self._cut(examples, pool)
        return EpochBatches(examples, starts, source.permutation(len(starts) - 1))

    def _examples_per_batch(self) -> int:
        if self.batch_unit == "sentences" or not self.num_examples:
            return self.batch_size
        mean = int(self._keys[0].sum(dtype=np.int64)) / self.num_examples   # exact, as sum/len
        return max(1, int(self.batch_size / max(mean, 1)))

    def _cut(self, examples: np.ndarray, pool: int) -> np.ndarray:
        """Where each batch starts in `examples` (sorted by length inside each pool of `pool`),
        with len(examples) appended: greedy cuts that fit the budget, never across pools."""
        n = len(examples)
        edges = range(0, n, pool)
        if self.batch_unit == "sentences":
            cuts = [np.arange(start, min(start + pool, n), self.batch_size) for start in edges]
        else:
            longest = self._keys[0][examples]
            cuts = [token_cuts(longest, start, min(start + pool, n), self.batch_size)
                    for start in edges]
        return np.concatenate([*cuts, np.array([n])]).astype(np.int64)


def sort_keys(lengths) -> list[np.ndarray]:
    """Per example, most significant first: the longest side, then each side (so equal keys
    mean equal padding); each (N,) int32, as a length beyond 2**31 tokens is not a sentence.
    An int32 array's columns are kept as views (not copied), so it must not change later."""
    table = np.asarray(lengths)
    if not len(table):
        return [np.zeros(0, dtype=np.int32)] * 2
    table = table.reshape(len(table), -1).astype(np.int32, copy=False)
    return [table.max(axis=1), *(table[:, column] for column in range(table.shape[1]))]


def token_cuts(longest: np.ndarray, start: int, end: int, budget: int) -> np.ndarray:
    """Batch starts in longest[start:end] (non-decreasing): each batch takes examples while
    (its longest, the newest) * count <= budget, and at least one."""
    cuts = []
    while start < end:
        cuts.append(start)
        first = int(longest[start])
        cap = end - start if first <= 0 else min(end - start, budget // first)
        if cap <= 1:
            start += 1
            continue
        # Sorted lengths make padded sizes non-decreasing, so the ones that fit are a prefix.
        padded = longest[start:start + cap].astype(np.int64) * np.arange(1, cap + 1)
        start += max(1, int(np.count_nonzero(padded <= budget)))
    return np.array(cuts, dtype=np.int64)


def sort_pools(examples: np.ndarray, keys: list[np.ndarray], pool: int) -> np.ndarray:
    """`examples` (N,) with each run of `pool` sorted by keys[0], keys[1], ... (each (N,),
    indexed by example), ties in their given order: one stable lexsort per pool (4.5M
    examples in pools of 7,000 in about 0.5 s)."""
    out = examples.copy()
    for start in range(0, len(examples), pool):
        part = examples[start:start + pool]
        out[start:start + pool] = part[np.lexsort([key[part] for key in reversed(keys)])]
    return out
