"""The memory-mapped pair store: the same pairs and batches as the in-memory path, built once
per key, atomically, and never read when incomplete."""

import gzip
import hashlib
import json
import multiprocessing
import os
import time

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.data import BucketBatchSampler, build_vocab, cache, collate
from attnlab.data.batching import collate_flat
from attnlab.data.cache import cache_root, cached_folder
from attnlab.data.encode import (
    VocabFiles,
    encode_pairs,
    encode_to_store,
    read_chunks,
    vocab_fingerprint,
)
from attnlab.data.store import MANIFEST, PairStore, is_complete
from attnlab.errors import DataError, WriteError

FAST = settings(max_examples=30, deadline=None)


@pytest.fixture(autouse=True)
def own_cache(tmp_path_factory, monkeypatch):
    """A cache of this module's own: opening a store remembers its files' digests there."""
    monkeypatch.setenv("ATTNLAB_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
FIELDS = ("src", "src_mask", "src_lengths", "tgt_in", "tgt_out", "tgt_mask")

SOURCES = ["der Hund läuft", "", "die Katze schläft auf dem Sofa", "ein sehr " * 12 + "Ende",
           "Bäume", "   ", "ich sehe dich", "wir gehen nach Hause", "gut", "es regnet heute"]
TARGETS = ["the dog runs", "nothing", "the cat sleeps on the sofa", "a very " * 12 + "end",
           "trees", "blank", "", "we go home", "good", "it rains today"]


def assert_same_batch(a, b):
    for name in FIELDS:
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert a.num_target_tokens == b.num_target_tokens and a.indices == b.indices


def write_corpus(folder, sources=SOURCES, targets=TARGETS, gz=False):
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for lang, lines in (("de", sources), ("en", targets)):
        path = folder / f"train.{lang}{'.gz' if gz else ''}"
        data = "".join(f"{line}\n" for line in lines).encode()
        path.write_bytes(gzip.compress(data) if gz else data)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def vocabs(tmp_path_factory):
    """A word vocabulary per side, saved where worker processes load them."""
    folder = tmp_path_factory.mktemp("vocab")
    src = build_vocab("word", SOURCES, size=None, directory=folder, name="src_vocab")
    tgt = build_vocab("word", TARGETS, size=None, directory=folder, name="tgt_vocab")
    return src, tgt, VocabFiles(str(folder), ("src_vocab", "tgt_vocab"), joint=False)


def build_store(tmp_path, vocabs, max_len=8, **options):
    paths = write_corpus(tmp_path / "text", gz=options.pop("gz", False))
    folder = tmp_path / "store"
    folder.mkdir()
    encode_to_store(folder, *paths, vocabs[2], max_len, **options)
    return PairStore(folder)


def test_store_holds_what_the_lists_hold(tmp_path, vocabs):
    store = build_store(tmp_path, vocabs, chunk_lines=3)
    kept, encoded, report = encode_pairs(list(zip(SOURCES, TARGETS, strict=True)), vocabs[0],
                                         vocabs[1], 8)
    assert len(store) == len(kept) == 6
    assert store.lines.tolist() == kept
    assert [store.pair(i) for i in range(len(store))] == encoded
    assert store.lengths().tolist() == [[len(s), len(t)] for s, t in encoded]
    assert store.report == report   # chunks' reports merge into the whole file's
    assert report.empty == 3 and report.too_long == 1
    assert report.dropped_lines == [(2, "empty"), (4, "too long"), (6, "empty"), (7, "empty")]


@pytest.mark.parametrize("options", [{"workers": 2, "chunk_lines": 2}, {"gz": True}])
def test_workers_and_gzip_give_the_same_store(tmp_path, vocabs, options):
    one = build_store(tmp_path / "one", vocabs, chunk_lines=4)
    other = build_store(tmp_path / "other", vocabs, **options)
    for name in ("src.tokens", "src.offsets", "tgt.tokens", "tgt.offsets", "lines"):
        assert (one.folder / name).read_bytes() == (other.folder / name).read_bytes(), name
    assert one.report == other.report


@FAST
@given(seed=st.integers(0, 10**6), batch_size=st.integers(1, 60),
       unit=st.sampled_from(["sentences", "tokens"]), epoch=st.integers(0, 3))
def test_memmap_and_memory_give_identical_batches(tmp_path_factory, vocabs, seed, batch_size,
                                                  unit, epoch):
    store = shared_store(tmp_path_factory, vocabs)
    _, encoded, _ = encode_pairs(list(zip(SOURCES, TARGETS, strict=True)), vocabs[0],
                                 vocabs[1], 30)
    lengths = [(len(s) + 1, len(t) + 1) for s, t in encoded]
    from_lists = BucketBatchSampler(lengths, batch_size, batch_unit=unit, seed=seed)
    from_store = BucketBatchSampler(store.lengths() + 1, batch_size, batch_unit=unit, seed=seed)
    from_lists.set_epoch(epoch)
    from_store.set_epoch(epoch)
    batches = list(from_lists)
    assert batches == list(from_store)
    for indices in batches:
        assert_same_batch(collate([encoded[i] for i in indices], indices=indices),
                          store.batch(indices))


_STORES = {}


def shared_store(tmp_path_factory, vocabs):
    """One store for every hypothesis example (built once: examples share no fixture)."""
    if "store" not in _STORES:
        _STORES["store"] = build_store(tmp_path_factory.mktemp("shared"), vocabs, max_len=30)
    return _STORES["store"]


@FAST
@given(pairs=st.lists(st.tuples(st.lists(st.integers(4, 60), max_size=7),
                                st.lists(st.integers(4, 60), max_size=7)), min_size=1,
                      max_size=8),
       src_eos=st.booleans(), data=st.data())
def test_collate_flat_equals_collate(pairs, src_eos, data):
    arrays = []
    for side in (0, 1):
        ids = [pair[side] for pair in pairs]
        offsets = np.concatenate([[0], np.cumsum([len(x) for x in ids])]).astype(np.int64)
        tokens = np.array([i for x in ids for i in x], dtype=np.uint16)
        arrays.append((tokens, offsets))
    indices = data.draw(st.lists(st.integers(0, len(pairs) - 1), min_size=1, max_size=6))
    expected = collate([pairs[i] for i in indices], indices=indices, src_eos=src_eos)
    assert_same_batch(expected, collate_flat(*arrays, indices, src_eos=src_eos))


@pytest.mark.parametrize("workers", [1, 2])
def test_misaligned_files_and_bad_bytes_are_one_sentence(tmp_path, vocabs, workers):
    src, tgt = write_corpus(tmp_path / "short", targets=TARGETS[:7])
    with pytest.raises(DataError, match=r"has 10 lines but .* has 7: parallel files"):
        list(read_chunks(src, tgt, 3))
    src, tgt = write_corpus(tmp_path / "bad")
    tgt.write_bytes(tgt.read_bytes().replace(b"trees", b"tr\xffes"))
    folder = tmp_path / "store"
    folder.mkdir()
    with pytest.raises(DataError, match=r"train.en line 5: invalid UTF-8"):
        encode_to_store(folder, src, tgt, vocabs[2], 8, chunk_lines=2, workers=workers)


def test_fingerprint_follows_what_a_vocabulary_maps(vocabs):
    src, tgt, _ = vocabs
    assert vocab_fingerprint(src) == vocab_fingerprint(build_vocab("word", SOURCES, size=None,
                                                                   name="x"))
    assert vocab_fingerprint(src) != vocab_fingerprint(tgt)


def counting_build(calls):
    def build(folder):
        calls.append(folder)
        (folder / "data").write_text("x")
        (folder / MANIFEST).write_text("{}")

    return build


def ready(folder):
    return (folder / MANIFEST).is_file() and (folder / "data").is_file()


def test_cache_builds_once_and_reuses(tmp_path):
    calls = []
    first, built = cached_folder(tmp_path, "k1", counting_build(calls), ready)
    again, rebuilt = cached_folder(tmp_path, "k1", counting_build(calls), ready)
    other, _ = cached_folder(tmp_path, "k2", counting_build(calls), ready)
    assert (built, rebuilt) == (True, False) and first == again == tmp_path / "k1"
    assert len(calls) == 2 and other == tmp_path / "k2"
    assert not list(tmp_path.glob("*.tmp-*"))


def test_a_killed_or_failed_build_is_never_used(tmp_path):
    # What SIGKILL during a build leaves: a temporary folder with some files, never renamed.
    leftover = tmp_path / "k.tmp-123-abcd"
    leftover.mkdir()
    (leftover / "data").write_text("half")

    def fail(folder):
        (folder / "data").write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cached_folder(tmp_path, "k", fail, ready)
    assert not (tmp_path / "k").exists() and not list(tmp_path.glob("k.tmp-*"))
    calls = []
    folder, built = cached_folder(tmp_path, "k", counting_build(calls), ready)
    assert built and (folder / "data").read_text() == "x"


def test_an_incomplete_store_is_refused_and_rebuilt(tmp_path, vocabs):
    store = build_store(tmp_path, vocabs)
    assert is_complete(store.folder)
    tokens = store.folder / "src.tokens"
    tokens.write_bytes(tokens.read_bytes()[:-2])   # truncated
    assert not is_complete(store.folder)
    with pytest.raises(DataError, match="not a complete corpus store"):
        PairStore(store.folder)
    (store.folder / MANIFEST).unlink()
    assert not is_complete(store.folder)
    (store.folder / MANIFEST).write_text(json.dumps({"format": 0}))
    assert not is_complete(store.folder)

    parent, key = store.folder.parent, store.folder.name
    calls = []
    folder, built = cached_folder(parent, key, counting_build(calls), is_complete)
    assert built and calls   # the damaged folder was not taken for a store


@pytest.mark.parametrize("name", ["src.tokens", "tgt.offsets", "lengths"])
def test_a_damaged_store_of_the_right_size_is_refused_and_rebuilt(tmp_path, vocabs, name):
    store = build_store(tmp_path, vocabs)
    path = store.folder / name
    size = path.stat().st_size
    path.write_bytes(b"\xff" * size)   # other bytes, the same size
    assert path.stat().st_size == size and not is_complete(store.folder)
    with pytest.raises(DataError, match=rf"^{store.folder} is not a complete corpus store "
                       rf"\({name} does not match the SHA-256 in manifest.json\); delete it"):
        PairStore(store.folder)
    said = []
    folder, built = cached_folder(store.folder.parent, store.folder.name,
                                  counting_build([]), is_complete, log=said.append)
    assert built and said == [f"{folder} is incomplete or damaged (or of an older format): "
                              f"making it again"]


def test_an_unchanged_store_is_hashed_once(tmp_path, vocabs, monkeypatch):
    store = build_store(tmp_path, vocabs)
    monkeypatch.setattr(cache, "RACY_SECONDS", -1)   # as if written long ago
    hashed = []
    real = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest", lambda *a: hashed.append(1) or real(*a))
    PairStore(store.folder)
    assert len(hashed) == 6   # each of its six files once
    PairStore(store.folder)
    assert len(hashed) == 6


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNLAB_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("ATTNLAB_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_root() == tmp_path / "x" / "attnlab"


def build_slowly(parent, log):
    """One process's cached_folder call whose build takes a while and says it ran."""

    def build(folder):
        with open(log, "a") as file:
            file.write("built\n")
        time.sleep(0.3)
        counting_build([])(folder)

    cached_folder(parent, "k", build, ready)


def test_processes_of_one_machine_build_a_key_once(tmp_path):
    context = multiprocessing.get_context("fork")
    log = tmp_path / "log"
    processes = [context.Process(target=build_slowly, args=(tmp_path / "cache", log))
                 for _ in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    assert [p.exitcode for p in processes] == [0, 0, 0]
    assert log.read_text() == "built\n" and ready(tmp_path / "cache" / "k")


def test_digests_are_remembered_until_a_file_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_CACHE", str(tmp_path / "cache"))
    hashed = []
    real = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest", lambda *a: hashed.append(1) or real(*a))
    path = tmp_path / "train.de"
    path.write_text("abc\n")
    # Just written: hashed every time (a write in the same clock tick would keep its times).
    assert cache.file_digest(path) == cache.file_digest(path) == hashlib.sha256(
        b"abc\n").hexdigest()
    assert len(hashed) == 2
    monkeypatch.setattr(cache, "RACY_SECONDS", -1)   # as if written long ago
    os.utime(path, ns=(10**9, 5 * 10**9))
    cache.file_digest(path)
    assert cache.file_digest(path) == hashlib.sha256(b"abc\n").hexdigest()
    assert len(hashed) == 3
    path.write_text("abd\n")   # same size, other bytes
    os.utime(path, ns=(10**9, 6 * 10**9))
    assert cache.file_digest(path) == hashlib.sha256(b"abd\n").hexdigest()
    assert len(hashed) == 4


def test_an_unwritable_cache_is_one_sentence_naming_the_variable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("in the way")
    with pytest.raises(WriteError, match=r"cannot write .*file/pairs.*set ATTNLAB_CACHE"):
        cached_folder(blocker / "pairs", "k", counting_build([]), ready)
