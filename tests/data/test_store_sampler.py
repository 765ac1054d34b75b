"""The numpy sampler against plain loops: the same cuts for its own order, and its share under
DDP."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.data.sampler import BucketBatchSampler, Pcg64Order, sort_keys
from attnlab.train.distributed import DistContext, rank_batches

FAST = settings(max_examples=40, deadline=None)

lengths_strategy = st.one_of(
    st.lists(st.integers(1, 40), max_size=150),
    st.lists(st.tuples(st.integers(1, 40), st.integers(1, 40)), max_size=150))


def reference_batches(lengths, batch_size, unit, shuffle, pool_batches, permutations):
    """The first sampler's algorithm in plain Python (attnlab before the numpy sampler), with
    its random orders drawn from `permutations` (None: no shuffle)."""
    keys = [(max(x), *x) if isinstance(x, tuple) else (x, x) for x in lengths]

    def cut(indices):
        batches, current, longest = [], [], 0
        for index in indices:
            length = keys[index][0]
            fits = (len(current) < batch_size if unit == "sentences"
                    else max(longest, length) * (len(current) + 1) <= batch_size)
            if current and not fits:
                batches.append(current)
                current, longest = [], 0
            current.append(index)
            longest = max(longest, length)
        return [*batches, current] if current else batches

    if permutations is None:
        return cut(sorted(range(len(keys)), key=keys.__getitem__))
    order = [int(i) for i in permutations.permutation(len(keys))]
    per_batch = batch_size
    if unit == "tokens" and keys:
        per_batch = max(1, int(batch_size / max(sum(k[0] for k in keys) / len(keys), 1)))
    pool = pool_batches * per_batch
    batches = []
    for start in range(0, len(order), pool):
        batches += cut(sorted(order[start:start + pool], key=keys.__getitem__))
    return [batches[int(i)] for i in permutations.permutation(len(batches))]


settings_strategy = dict(lengths=lengths_strategy, batch_size=st.integers(1, 90),
                         unit=st.sampled_from(["sentences", "tokens"]),
                         pool=st.integers(1, 4), seed=st.integers(-5, 5),
                         epoch=st.integers(0, 3))


@FAST
@given(**settings_strategy, shuffle=st.booleans())
def test_numpy_cuts_equal_the_greedy_loop(lengths, batch_size, unit, pool, seed, epoch,
                                          shuffle):
    sampler = BucketBatchSampler(lengths, batch_size, batch_unit=unit, seed=seed,
                                 pool_batches=pool, shuffle=shuffle)
    sampler.set_epoch(epoch)
    expected = reference_batches(lengths, batch_size, unit, shuffle, pool,
                                 Pcg64Order(seed, epoch) if shuffle else None)
    assert list(sampler) == expected


def test_pcg64_permutations_are_permutations_and_depend_on_seed_and_epoch():
    draws = {(seed, epoch): Pcg64Order(seed, epoch).permutation(1000).tolist()
             for seed in (0, 1) for epoch in (0, 1)}
    assert all(sorted(d) == list(range(1000)) for d in draws.values())
    assert len({tuple(d) for d in draws.values()}) == 4
    assert Pcg64Order(1, 0).permutation(1000).tolist() == draws[(1, 0)]


def test_lengths_from_lists_and_arrays_give_one_sampler():
    pairs = [(3, 5), (7, 2), (1, 1), (4, 4)]
    from_list = BucketBatchSampler(pairs, 9, batch_unit="tokens", seed=2)
    from_array = BucketBatchSampler(np.array(pairs), 9, batch_unit="tokens", seed=2)
    assert list(from_list) == list(from_array)
    assert [k.tolist() for k in sort_keys(pairs)] == [[5, 7, 1, 4], [3, 7, 1, 4], [5, 2, 1, 4]]
    assert len(BucketBatchSampler([], 4)) == 0 and list(BucketBatchSampler(np.zeros((0, 2)), 4)) \
        == []


@FAST
@given(lengths=lengths_strategy, batch_size=st.integers(1, 90), world=st.integers(1, 4),
       unit=st.sampled_from(["sentences", "tokens"]))
def test_ranks_share_an_epoch_disjointly(lengths, batch_size, world, unit):
    """Every rank builds the same sampler and keeps batch r of each group of world_size; the
    shares are disjoint and cover the epoch but for its incomplete last group."""
    batches = list(BucketBatchSampler(lengths, batch_size, batch_unit=unit, seed=3))
    shares = []
    for rank in range(world):
        sampler = BucketBatchSampler(lengths, batch_size, batch_unit=unit, seed=3)
        shares.append(list(rank_batches(sampler, DistContext(rank=rank, world_size=world))))
    seen = [i for share in shares for batch in share for i in batch]
    assert len(seen) == len(set(seen))
    complete = len(batches) - len(batches) % world
    assert sorted(seen) == sorted(i for batch in batches[:complete] for i in batch)
    assert all(len(share) == complete // world for share in shares)
