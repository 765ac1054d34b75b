"""Fetch the files of a public data set into a folder, each checked by SHA-256: downloaded, or
copied from a local copy. Used by the Multi30k and RWTH gold-alignment downloaders.

A file already there with the right digest is kept (a cache). All other files are written to
temporary files beside their real names and renamed only once every file has arrived with the
right digest, so a failed fetch (a digest mismatch, a broken connection, a full disk) changes
nothing: never a half file, never a set with one file changed and another not.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

from attnlab.errors import DataError
from attnlab.files import writing

TIMEOUT_S = 60  # per network operation, not per file: a slow but live server still finishes

# What can go wrong on the wire; local disk errors are not in here and keep their traceback.
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError)


def sha256_of(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_files(dest: str | os.PathLike, checksums: Mapping[str, str], *, base_url: str,
                from_dir: str | os.PathLike | None = None, dataset: str = "data set",
                progress: Callable[[str], None] | None = print) -> dict[str, Path]:
    """Put every file of `checksums` (file name -> SHA-256) in `dest`; return {name: path}.

    Missing files are downloaded from `{base_url}/{name}`, or, with `from_dir`, copied from a
    local copy, which is first checked whole (every file present, every digest right). `from_dir`
    may be `dest` itself: the files are then used in place. `dataset` names the data in messages
    ("Multi30k"); `progress` gets one line per file (None: silent). Raises DataError for a failed
    download, a digest mismatch or an incomplete local copy; nothing in `dest` changes then.
    """
    if from_dir is not None:
        _check_local_copy(Path(from_dir), checksums)
    dest = Path(dest)
    created = not dest.exists()
    lines = []
    with writing(dest):  # a full disk or a read-only folder: one sentence naming dest
        dest.mkdir(parents=True, exist_ok=True)
        try:
            with ExitStack() as renames:  # the renames happen when every file has arrived
                for name, sha256 in checksums.items():
                    lines.append(_fetch_one(name, sha256, dest / name, base_url, from_dir,
                                            dataset, renames))
        except BaseException:
            if created and not any(dest.iterdir()):
                dest.rmdir()
            raise
    if progress is not None:
        for line in lines:
            progress(line)
    return {name: dest / name for name in checksums}


def _fetch_one(name: str, sha256: str, path: Path, base_url: str,
               from_dir: str | os.PathLike | None, dataset: str, renames: ExitStack) -> str:
    """Fetch `name` into a temporary file renamed onto `path` when `renames` closes without an
    error (or keep `path` if it is good already); return the progress line saying how."""
    cached = path.is_file()
    if cached and sha256_of(path) == sha256:
        return f"{name}: cached in {path.parent}"
    out = renames.enter_context(_replacing(path))
    if from_dir is not None:
        with open(Path(from_dir) / name, "rb") as stream:
            shutil.copyfileobj(stream, out)
        return f"{name}: copied from {from_dir}"
    size = _download(f"{base_url.rstrip('/')}/{name}", name, sha256, out, dataset)
    again = " again (the cached copy was damaged)" if cached else ""
    return f"{name}: downloaded{again}, {size:,} bytes"


def _check_local_copy(directory: Path, checksums: Mapping[str, str]) -> None:
    if not directory.is_dir():
        raise DataError(f"--from {directory}: no such directory")
    missing = [name for name in checksums if not (directory / name).is_file()]
    if missing:
        raise DataError(f"--from {directory}: missing {', '.join(missing)}")
    for name, expected in checksums.items():
        actual = sha256_of(directory / name)
        if actual != expected:
            raise DataError(f"--from {directory}: {name} has SHA-256 {actual}, expected "
                            f"{expected}")


@contextmanager
def _replacing(path: Path) -> Iterator[BinaryIO]:
    """A temporary file beside `path`, renamed onto it only if the block succeeds, so an
    interrupted or failed fetch never leaves a half file under the real name."""
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        os.replace(temp_name, path)
    finally:
        Path(temp_name).unlink(missing_ok=True)  # nothing left to remove after the rename


def _download(url: str, name: str, expected: str, out: BinaryIO, dataset: str) -> int:
    """Stream `url` into `out`, hashing as it goes; raise DataError on failure or bad digest."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            while chunk := response.read(1 << 16):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as error:
        raise DataError(
            f"could not download {url}: HTTP {error.code} {error.reason}; check --base-url, "
            f"or use --from DIR with a local copy of the {dataset} files"
        ) from None
    except _NETWORK_ERRORS as error:
        reason = getattr(error, "reason", None) or error
        raise DataError(
            f"could not download {url} ({reason}); without network access, "
            f"use --from DIR with a local copy of the {dataset} files"
        ) from None
    actual = digest.hexdigest()
    if actual != expected:
        raise DataError(
            f"downloaded {name} from {url} has SHA-256 {actual}, expected {expected}; the "
            f"server's file is not the known {dataset} release, so nothing was written"
        )
    return out.tell()
