"""Translation training from the memory-mapped store: the batches of the in-memory path, the
cache reused or rebuilt as the files and vocabularies change, and an exact mid-epoch resume."""

import json
from functools import partial

import pytest
import torch

from attnlab.config import config_from_dict, config_to_dict, load_config
from attnlab.data import write_dates
from attnlab.data.encode import vocab_fingerprint
from attnlab.data.store import PairStore, is_complete
from attnlab.errors import ConfigError, DataError
from attnlab.train import run_experiment
from attnlab.train.checkpoint import RunDir
from attnlab.translation import RunConfig, TranslationTask
from attnlab.translation import corpus as corpus_module

train_translation = partial(run_experiment, TranslationTask)
FIELDS = ("src", "src_mask", "src_lengths", "tgt_in", "tgt_out", "tgt_mask")

CONFIG = {
    "data": {"train": "train", "valid": "val", "test": "test", "src_lang": "src",
             "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False, "max_len": 60,
             "batch_size": 16, "valid_sentences": 8, "store": "memmap"},
    "model": {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.1},
              "decoder": {"kind": "luong", "embedding_dim": 8, "hidden_dim": 16,
                          "dropout": 0.1, "attention": {"score": "general"}}},
    "train": {"lr": 0.01, "max_steps": 12, "max_epochs": None, "validate_every": None,
              "checkpoint_every": 4, "log_every": 1, "threads": 1, "tensorboard": False},
    "decode": {"max_len_ratio": 0.0, "max_len_extra": 12, "batch_size": 8},
}


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Each test's own cache: nothing is written to the user's."""
    monkeypatch.setenv("ATTNLAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def dates_dir(tmp_path):
    write_dates(tmp_path / "dates", size=300, seed=3)
    return tmp_path / "dates"


def config(dates_dir, store="memmap", **sections):
    data = json.loads(json.dumps(CONFIG))
    data["data"].update(dir=str(dates_dir), store=store)
    for section, values in sections.items():
        data[section].update(values)
    return load_config(data, RunConfig)


def task(cfg, run_dir=None):
    messages = []
    return TranslationTask(cfg, run_dir, log=messages.append), messages


def test_memmap_task_gives_the_memory_tasks_batches(dates_dir):
    memory, _ = task(config(dates_dir, "memory"))
    stored, messages = task(config(dates_dir))
    assert isinstance(stored.train_data, PairStore) and not isinstance(memory.train_data,
                                                                       PairStore)
    assert any("vocabularies:" in m and "(trained in " in m for m in messages)
    for side in ("src", "tgt"):
        assert vocab_fingerprint(getattr(memory.vocabs, side)) == vocab_fingerprint(
            getattr(stored.vocabs, side))
    assert stored.train_data.report == memory.train_data.report
    for _ in range(2):   # two epochs
        batches = list(memory.sampler)
        assert batches == list(stored.sampler) and len(batches) > 10
        for indices in batches:
            a, b = memory.make_batch(indices), stored.make_batch(indices)
            assert all(torch.equal(getattr(a, f), getattr(b, f)) for f in FIELDS)
            assert (a.indices, a.num_target_tokens) == (b.indices, b.num_target_tokens)


def folders(messages):
    """What the task said of its vocabularies and store: (folder, how) per line."""
    found = {}
    for message in messages:
        for kind in ("vocabularies", "training pairs"):
            if message.startswith(f"{kind}: "):
                path, how = message.removeprefix(f"{kind}: ").rsplit(" (", 1)
                found[kind] = (path, how.rstrip(")").split(" ")[0])
    return found


def test_the_cache_is_reused_when_unchanged_and_rebuilt_when_not(dates_dir, tmp_path):
    first = folders(task(config(dates_dir))[1])
    again = folders(task(config(dates_dir))[1])
    assert {k: how for k, (_, how) in first.items()} == {"vocabularies": "trained",
                                                         "training pairs": "encoded"}
    assert again == {k: (path, "reused") for k, (path, _) in first.items()}

    # Another vocabulary (word level) on the same files: new vocabularies, a new store.
    words = folders(task(config(dates_dir, data={"vocab": "word"}))[1])
    assert words["vocabularies"][1] == "trained" and words["training pairs"][1] == "encoded"

    # A changed training file: both again; the old store stays valid for the old files.
    with open(dates_dir / "train.src", "a") as src, open(dates_dir / "train.tgt", "a") as tgt:
        src.write("1. Mai 1999\n")
        tgt.write("1999-05-01\n")
    changed = folders(task(config(dates_dir))[1])
    assert changed["training pairs"][1] == "encoded"
    assert changed["training pairs"][0] != first["training pairs"][0]
    assert PairStore(first["training pairs"][0]).report.total == 240


@pytest.mark.slow
def test_a_resumed_run_reads_the_store_of_its_own_vocabularies(dates_dir, tmp_path):
    train_translation(config(dates_dir, train={"max_steps": 1}), tmp_path / "run",
                      progress=False, log=lambda _: None)
    resumed = folders(task(config(dates_dir), tmp_path / "run")[1])
    assert resumed == {"training pairs": (resumed["training pairs"][0], "reused")}


def losses(run_dir):
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return {r["step"]: r["loss"] for r in records if r["kind"] == "train"}


@pytest.mark.slow
def test_resume_mid_epoch_from_the_store_equals_an_uninterrupted_run(dates_dir, tmp_path):
    quiet = {"progress": False, "log": lambda _: None}
    train_translation(config(dates_dir), tmp_path / "straight", **quiet)
    train_translation(config(dates_dir, "memory"), tmp_path / "memory", **quiet)
    # 15 batches an epoch: step 7 stops mid-epoch, step 12 is in the same epoch.
    train_translation(config(dates_dir, train={"max_steps": 7}), tmp_path / "split", **quiet)
    resumed = train_translation(config(dates_dir), tmp_path / "split", resume=True, **quiet)
    assert resumed.steps == 12 and resumed.epochs == 0
    expected = losses(tmp_path / "straight")
    assert sorted(expected) == list(range(1, 13))
    assert losses(tmp_path / "split") == expected == losses(tmp_path / "memory")
    weights = [RunDir(tmp_path / name).file("last/model.safetensors").read_bytes()
               for name in ("straight", "split", "memory")]
    assert weights[0] == weights[1] == weights[2]


def test_empty_training_files_are_the_same_sentence_on_both_paths(dates_dir):
    (dates_dir / "train.src").write_text("\n \n")
    (dates_dir / "train.tgt").write_text("a\n\n")
    messages = []
    for store in ("memory", "memmap"):
        with pytest.raises(DataError, match="none of their 2 line pairs has text") as error:
            task(config(dates_dir, store))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_the_store_setting(dates_dir, monkeypatch):
    stored = config_to_dict(config(dates_dir, "auto"))
    del stored["data"]["store"]   # a run from before the setting
    assert config_from_dict(stored, RunConfig).data.store == "auto"
    guided = {"guided_alignment": {"links": "links.txt"}}
    with pytest.raises(ConfigError, match="set data.store to auto or memory"):
        config(dates_dir, train=guided)
    auto = config(dates_dir, "auto", train=guided).data
    assert not corpus_module.uses_store(auto, guided=False)   # a small corpus
    monkeypatch.setattr(corpus_module, "MEMMAP_FROM_BYTES", 1)
    assert corpus_module.uses_store(auto, guided=False)
    assert not corpus_module.uses_store(auto, guided=True)


def test_a_damaged_store_is_encoded_again_before_the_run_folder_is_written(dates_dir,
                                                                            tmp_path):
    first = task(config(dates_dir))[0].train_data.folder
    tokens = first / "src.tokens"
    tokens.write_bytes(b"\xff" * tokens.stat().st_size)   # the right size, other bytes
    quiet = {"progress": False, "log": lambda _: None}
    train_translation(config(dates_dir, train={"max_steps": 2}), tmp_path / "run", **quiet)
    assert RunDir(tmp_path / "run").has_checkpoint("last")
    assert is_complete(first)   # encoded again in its place

    # Damaged between the cache's check and the opening: refused in one sentence, and the
    # run folder is not made.
    tokens.write_bytes(b"\xff" * tokens.stat().st_size)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(corpus_module, "is_complete", lambda folder: True)
        with pytest.raises(DataError, match=r"^\S+ is not a complete corpus store \(src\.tokens "
                           r"does not match the SHA-256 in manifest\.json\); delete it"):
            train_translation(config(dates_dir), tmp_path / "other", **quiet)
    assert not (tmp_path / "other").exists()
