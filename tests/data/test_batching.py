import json
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.data.batching import BucketBatchSampler, collate, iterate_batches
from attnlab.data.vocab import BOS_ID, EOS_ID, PAD_ID
from attnlab.errors import CheckpointError, ConfigError

FAST = settings(max_examples=40, deadline=None)


def random_lengths(n, seed=0, high=50):
    rng = random.Random(seed)
    return [rng.randint(1, high) for _ in range(n)]


def epoch(sampler):
    return [list(batch) for batch in sampler]


@FAST
@given(
    lengths=st.lists(st.integers(1, 40), max_size=120),
    batch_size=st.integers(1, 70),
    unit=st.sampled_from(["sentences", "tokens"]),
    shuffle=st.booleans(),
    pool=st.integers(1, 4),
)
def test_each_example_exactly_once_and_budget_respected(lengths, batch_size, unit, shuffle, pool):
    sampler = BucketBatchSampler(lengths, batch_size, batch_unit=unit, shuffle=shuffle,
                                 seed=3, pool_batches=pool)
    for _ in range(2):  # two epochs: the second is a different order, still a partition
        expected_count = len(sampler)
        batches = epoch(sampler)
        assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
        assert all(batches) and len(batches) == expected_count
        for batch in batches:
            if unit == "sentences":
                assert len(batch) <= batch_size
            elif len(batch) > 1:  # a single over-long example may exceed the budget alone
                assert max(lengths[i] for i in batch) * len(batch) <= batch_size


@FAST
@given(pairs=st.lists(st.tuples(st.integers(1, 30), st.integers(1, 30)), min_size=1, max_size=80),
       batch_size=st.integers(30, 200))
def test_pair_lengths_budget_uses_longer_side(pairs, batch_size):
    sampler = BucketBatchSampler(pairs, batch_size, batch_unit="tokens", seed=1)
    for batch in sampler:
        if len(batch) > 1:
            assert max(max(pairs[i]) for i in batch) * len(batch) <= batch_size


def test_over_long_example_gets_its_own_batch():
    sampler = BucketBatchSampler([3, 3, 100, 3], 20, batch_unit="tokens", shuffle=False)
    assert epoch(sampler) == [[0, 1, 3], [2]]


def test_batches_hold_similar_lengths():
    lengths = random_lengths(2000, seed=1, high=100)
    sampler = BucketBatchSampler(lengths, 20, seed=0, pool_batches=50)
    spreads = [max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in sampler]
    # Random batches of 20 from 1..100 would spread about 85; sorting inside pools of
    # 1000 examples leaves a few units.
    assert sum(spreads) / len(spreads) < 10


def test_deterministic_given_seed_and_epoch():
    lengths = random_lengths(300)
    first = BucketBatchSampler(lengths, 16, seed=7)
    second = BucketBatchSampler(lengths, 16, seed=7)
    assert epoch(first) == epoch(second)
    first.set_epoch(5)
    second.set_epoch(5)
    assert epoch(first) == epoch(second)
    assert epoch(BucketBatchSampler(lengths, 16, seed=8)) != epoch(
        BucketBatchSampler(lengths, 16, seed=7))


def test_order_changes_across_epochs_and_epoch_advances():
    sampler = BucketBatchSampler(random_lengths(300), 16, seed=7)
    zero = epoch(sampler)
    assert sampler.state_dict()["epoch"] == 1 and sampler.state_dict()["batches_done"] == 0
    one = epoch(sampler)
    assert zero != one
    sampler.set_epoch(0)
    assert epoch(sampler) == zero


def test_does_not_touch_global_rng():
    random.seed(123)
    expected = random.random()
    random.seed(123)
    epoch(BucketBatchSampler(random_lengths(100), 8, seed=1))
    assert random.random() == expected


def test_unshuffled_batches_are_sorted_and_fixed():
    lengths = [5, 1, 4, 1, 3]
    sampler = BucketBatchSampler(lengths, 2, shuffle=False)
    assert epoch(sampler) == [[1, 3], [4, 2], [0]]
    assert epoch(sampler) == [[1, 3], [4, 2], [0]]


@pytest.mark.parametrize("unit, size", [("sentences", 7), ("tokens", 120)])
def test_resume_mid_epoch_equals_uninterrupted_run(unit, size):
    lengths = random_lengths(200, seed=2)
    reference = BucketBatchSampler(lengths, size, batch_unit=unit, seed=4)
    reference.set_epoch(2)
    uninterrupted = epoch(reference)

    interrupted = BucketBatchSampler(lengths, size, batch_unit=unit, seed=4)
    interrupted.set_epoch(2)
    iterator = iter(interrupted)
    taken = [next(iterator) for _ in range(3)]
    state = json.loads(json.dumps(interrupted.state_dict()))  # must survive a JSON checkpoint
    assert state["epoch"] == 2 and state["batches_done"] == 3

    resumed = BucketBatchSampler(lengths, size, batch_unit=unit, seed=4)
    resumed.load_state_dict(state)
    rest = epoch(resumed)
    assert taken == uninterrupted[:3]
    assert rest == uninterrupted[3:]
    assert resumed.state_dict()["epoch"] == 3


def test_resume_on_other_data_is_refused():
    state = BucketBatchSampler([1, 2, 3], 2).state_dict()
    with pytest.raises(CheckpointError, match="num_examples=3 but this run has num_examples=4"):
        BucketBatchSampler([1, 2, 3, 4], 2).load_state_dict(state)


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError, match="unknown batch_unit 'words'"):
        BucketBatchSampler([1], 2, batch_unit="words")
    with pytest.raises(ConfigError, match="must be positive"):
        BucketBatchSampler([1], 0)


def test_works_as_dataloader_batch_sampler():
    data = list(range(10))
    sampler = BucketBatchSampler([1] * 10, 4, seed=0)
    loader = torch.utils.data.DataLoader(data, batch_sampler=sampler)
    seen = torch.cat(list(loader))
    assert sorted(seen.tolist()) == data and len(loader) == 3


def test_collate_shapes_and_masks():
    batch = collate([([5, 6, 7], [8, 9]), ([4], [10, 11, 12, 13])], indices=[7, 2])
    assert batch.src.tolist() == [[5, 6, 7, EOS_ID], [4, EOS_ID, PAD_ID, PAD_ID]]
    assert batch.src_mask.tolist() == [[True] * 4, [True, True, False, False]]
    assert batch.src_lengths.tolist() == [4, 2]
    assert batch.tgt_in.tolist() == [[BOS_ID, 8, 9, PAD_ID, PAD_ID], [BOS_ID, 10, 11, 12, 13]]
    assert batch.tgt_out.tolist() == [[8, 9, EOS_ID, PAD_ID, PAD_ID], [10, 11, 12, 13, EOS_ID]]
    assert batch.tgt_mask.tolist() == [[True] * 3 + [False] * 2, [True] * 5]
    assert batch.num_target_tokens == 8
    assert batch.indices == [7, 2]
    assert batch.src.dtype == torch.long and batch.src_mask.dtype == torch.bool


def test_collate_without_source_eos_and_custom_pad():
    batch = collate([([5, 6], [8]), ([4], [9])], src_eos=False, pad_id=-1)
    assert batch.src.tolist() == [[5, 6], [4, -1]]
    assert batch.tgt_in.tolist() == [[BOS_ID, 8], [BOS_ID, 9]]
    assert batch.indices == [0, 1]


@FAST
@given(st.lists(st.tuples(st.lists(st.integers(4, 99), max_size=6),
                          st.lists(st.integers(4, 99), max_size=6)), min_size=1, max_size=5))
def test_collate_masks_match_content(examples):
    batch = collate(examples)
    for row, (src, tgt) in enumerate(examples):
        assert batch.src[row][batch.src_mask[row]].tolist() == [*src, EOS_ID]
        assert batch.tgt_out[row][batch.tgt_mask[row]].tolist() == [*tgt, EOS_ID]
        assert batch.tgt_in[row][batch.tgt_mask[row]].tolist() == [BOS_ID, *tgt]
        assert (batch.src[row][~batch.src_mask[row]] == PAD_ID).all()
    assert batch.num_target_tokens == sum(len(t) + 1 for _, t in examples)


def test_iterate_batches_and_to_device():
    pairs = [([4 + i] * (i + 1), [5]) for i in range(6)]
    sampler = BucketBatchSampler([len(s) + 1 for s, _ in pairs], 4, seed=0)
    batches = [batch.to("cpu") for batch in iterate_batches(pairs, sampler)]
    assert sorted(i for b in batches for i in b.indices) == list(range(6))
    for batch in batches:
        for row, index in enumerate(batch.indices):
            assert batch.src[row, 0].item() == 4 + index
