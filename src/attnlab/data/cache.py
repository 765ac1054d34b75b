"""Attnlab's cache: folders of things it can make again, keyed by what they were made from.

    folder, built = cached_folder(cache_dir("pairs"), key, build, ready)

The root is $ATTNLAB_CACHE, else $XDG_CACHE_HOME/attnlab, else ~/.cache/attnlab. A folder is
built into a temporary folder beside it and renamed into place at the end, so a build that is
killed leaves only a `KEY.tmp-*` folder, which is never read and is removed by the next build
of that key. A lock file makes the processes of one machine (torchrun's ranks) build a key
once: the others wait, then read it. Where the lock does not reach (a cache shared over NFS by
several machines), two builds may run, and the second to finish keeps the first's folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from attnlab.errors import WriteError
from attnlab.files import atomic_output, writing

CACHE_VARIABLE = "ATTNLAB_CACHE"
RACY_SECONDS = 2


def cache_root() -> Path:
    """$ATTNLAB_CACHE, else $XDG_CACHE_HOME/attnlab, else ~/.cache/attnlab."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "attnlab"


def cache_dir(kind: str) -> Path:
    """The cache's folder for one kind of thing (e.g. "pairs", "vocabularies")."""
    return cache_root() / kind


def file_digest(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, in hex (about 2 GB/s). Remembered in the cache with the
    file's identity (device, inode, size, modification and change times in ns): a write
    changes the change time, which no tool sets back, so an unchanged file is not read again.
    A file changed in the last RACY_SECONDS is hashed each time (a second write within the
    clock's tick would keep its times)."""
    path = Path(path)
    info = path.stat()
    identity = [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]
    memo = cache_dir("digests") / f"{cache_key({'path': str(path.resolve())})}.json"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        saved = json.loads(memo.read_text(encoding="utf-8"))
        if saved["identity"] == identity:
            return str(saved["sha256"])
    with open(path, "rb") as file:
        digest = hashlib.file_digest(file, "sha256").hexdigest()
    if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > RACY_SECONDS * 10**9:
        # A cache that cannot be written costs only the hashing next time.
        with contextlib.suppress(WriteError):
            with writing(memo.parent):
                memo.parent.mkdir(parents=True, exist_ok=True)
            with atomic_output(memo) as file:
                file.write(json.dumps({"path": str(path), "identity": identity,
                                       "sha256": digest}) + "\n")
    return digest


def cache_key(description: dict) -> str:
    """A folder name for what `description` (JSON-able) describes: 32 hex digits of its hash."""
    text = json.dumps(description, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cached_folder(parent: Path, key: str, build: Callable[[Path], None],
                  ready: Callable[[Path], bool],
                  log: Callable[[str], None] | None = None) -> tuple[Path, bool]:
    """`parent/key`, built by `build(folder)` unless `ready(parent/key)` says it is complete;
    returns the folder and whether this call built it. A failed build leaves nothing behind.
    A folder that is there but not ready (damaged, or from an older format) is built again,
    and `log` says so in one line. An unwritable cache is one WriteError sentence."""
    final = parent / key
    if ready(final):
        return final, False
    if log is not None and final.exists():
        log(f"{final} is incomplete or damaged (or of an older format): making it again")
    with _writing_cache(parent):
        parent.mkdir(parents=True, exist_ok=True)
    with _locked(parent / f"{key}.lock"):
        if ready(final):   # built by another process while this one waited
            return final, False
        _remove_leftovers(parent, key)
        # Not mkdtemp's private 0700 folder: a cache shared by a team is read by all of them.
        scratch = parent / f"{key}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        with _writing_cache(scratch):
            scratch.mkdir()
        try:
            build(scratch)
            _sync_folder(scratch)
            try:
                os.rename(scratch, final)
            except OSError:
                if not ready(final):   # not another machine's finished build: a real failure
                    raise
                shutil.rmtree(scratch, ignore_errors=True)
                return final, False
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        _sync_folder(parent, files=False)
    return final, True


@contextlib.contextmanager
def _writing_cache(path: Path) -> Iterator[None]:
    """An OSError in the block as one WriteError sentence that says how to move the cache."""
    try:
        with writing(path):
            yield
    except WriteError as error:
        raise WriteError(f"{error}; or set {CACHE_VARIABLE} to put attnlab's cache "
                         f"elsewhere") from None


def _remove_leftovers(parent: Path, key: str) -> None:
    """Folders of builds that were killed (this process holds the key's lock, so none is
    running here), and an incomplete `key` folder (its files damaged or removed by hand)."""
    for leftover in parent.glob(f"{key}.tmp-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    if (parent / key).exists():
        shutil.rmtree(parent / key, ignore_errors=True)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` between processes (fcntl; none where it does not exist)."""
    try:
        import fcntl
    except ImportError:   # not a POSIX system: builds may race, and the rename settles it
        yield
        return
    with _writing_cache(path), open(path, "a") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(file, fcntl.LOCK_UN)


def _sync_folder(folder: Path, *, files: bool = True) -> None:
    """Flush a folder's files (unless files=False) and its list of entries to disk, so that a
    crash after the rename cannot leave a complete-looking folder of empty files."""
    paths = [p for p in folder.iterdir() if p.is_file()] if files else []
    for path in [*paths, folder]:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
