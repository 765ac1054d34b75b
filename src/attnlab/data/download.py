"""Fetch the files of a public data set into a folder, each checked by SHA-256: downloaded, or
copied from a local copy. Used by the Multi30k and RWTH gold-alignment downloaders.

A file already there with the right digest is kept (a cache). All other files are written to
temporary files beside their real names and renamed only once every file has arrived with the
right digest, so a failed fetch (a digest mismatch, a broken connection, a full disk) changes
nothing: never a half file, never a set with one file changed and another not.

A transfer that breaks off (the connection dropped, or fewer bytes than the server's
Content-Length) is tried again after each of RETRY_DELAYS_S, then refused saying how many bytes
arrived; only a file that arrived whole is compared with its digest.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from attnlab.errors import DataError
from attnlab.files import writing

TIMEOUT_S = 60  # per network operation, not per file: a slow but live server still finishes
RETRY_DELAYS_S = (2.0, 8.0, 30.0)  # the waits before each new try of a broken-off transfer

# What can go wrong on the wire; local disk errors are not in here and keep their traceback.
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError)


def sha256_of(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class _Source:
    """Where the files come from: `{base_url}/{name}`, or the local copy `from_dir`; dataset
    names them in messages, retry_delays are the waits before each new try, progress the
    callback for one line per file (and per retry)."""

    base_url: str
    from_dir: Path | None
    dataset: str
    retry_delays: Sequence[float]
    progress: Callable[[str], None] | None


def fetch_files(dest: str | os.PathLike, checksums: Mapping[str, str], *, base_url: str,
                from_dir: str | os.PathLike | None = None, dataset: str = "data set",
                progress: Callable[[str], None] | None = print,
                retry_delays: Sequence[float] | None = None) -> dict[str, Path]:
    """Put every file of `checksums` (file name -> SHA-256) in `dest`; return {name: path}.

    Missing files are downloaded from `{base_url}/{name}`, or, with `from_dir`, copied from a
    local copy, which is first checked whole (every file present, every digest right). `from_dir`
    may be `dest` itself: the files are then used in place. `dataset` names the data in messages
    ("Multi30k"); `progress` gets one line per file (None: silent), and one per retry as it
    happens. A transfer that breaks off is tried again after each wait of `retry_delays`
    (seconds; None: RETRY_DELAYS_S). Raises DataError for a failed download, a digest mismatch
    or an incomplete local copy; nothing in `dest` changes then.
    """
    if from_dir is not None:
        _check_local_copy(Path(from_dir), checksums)
    source = _Source(base_url, None if from_dir is None else Path(from_dir), dataset,
                     tuple(RETRY_DELAYS_S if retry_delays is None else retry_delays),
                     progress)
    dest = Path(dest)
    created = not dest.exists()
    lines = []
    with writing(dest):  # a full disk or a read-only folder: one sentence naming dest
        dest.mkdir(parents=True, exist_ok=True)
        try:
            with ExitStack() as renames:  # the renames happen when every file has arrived
                for name, sha256 in checksums.items():
                    lines.append(_fetch_one(name, sha256, dest / name, source, renames))
        except BaseException:
            if created and not any(dest.iterdir()):
                dest.rmdir()
            raise
    if progress is not None:
        for line in lines:
            progress(line)
    return {name: dest / name for name in checksums}


def _fetch_one(name: str, sha256: str, path: Path, source: _Source, renames: ExitStack) -> str:
    """Fetch `name` into a temporary file renamed onto `path` when `renames` closes without an
    error (or keep `path` if it is good already); return the progress line saying how."""
    cached = path.is_file()
    if cached and sha256_of(path) == sha256:
        return f"{name}: cached in {path.parent}"
    out = renames.enter_context(replacing(path))
    if source.from_dir is not None:
        with open(source.from_dir / name, "rb") as stream:
            shutil.copyfileobj(stream, out)
        return f"{name}: copied from {source.from_dir}"
    size = _download(f"{source.base_url.rstrip('/')}/{name}", name, sha256, out, source)
    again = " again (the cached copy was damaged)" if cached else ""
    return f"{name}: downloaded{again}, {size:,} bytes"


def _check_local_copy(directory: Path, checksums: Mapping[str, str]) -> None:
    if directory.exists() and not directory.is_dir():
        raise DataError(f"--from {directory} is a file; --from wants the folder that holds the "
                        f"data's files")
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
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A temporary file beside `path`, renamed onto it only if the block succeeds, so an
    interrupted or failed fetch never leaves a half file under the real name."""
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        os.replace(temp_name, path)
    finally:
        Path(temp_name).unlink(missing_ok=True)  # nothing left to remove after the rename


class _BrokenOff(Exception):
    """A transfer that stopped before its end: the bytes received, those the server announced
    (its Content-Length; None when it gave none) and why."""

    def __init__(self, received: int, length: int | None, why: str):
        super().__init__(why)
        self.received, self.length, self.why = received, length, why

    def told(self) -> str:
        """'after 400 of 1,000 bytes (the connection was reset)'."""
        of = "" if self.length is None else f" of {self.length:,}"
        return f"after {self.received:,}{of} bytes ({self.why})"


def _download(url: str, name: str, expected: str, out: BinaryIO, source: _Source) -> int:
    """Stream `url` into `out`, trying a broken-off transfer again after each retry delay;
    raise DataError when the last try breaks off too, on any other failure, or on a bad digest
    of a file that arrived whole."""
    delays = source.retry_delays
    for tries, delay in enumerate((*delays, None), start=1):
        out.seek(0)
        out.truncate()
        try:
            actual = _transfer(url, out, source.dataset)
            break
        except _BrokenOff as broken:
            if delay is None:
                times = "" if tries == 1 else f" on each of {tries} tries, the last time"
                raise DataError(
                    f"the download of {url} broke off{times} {broken.told()}, so nothing was "
                    f"written; try again later, or use --from DIR with a local copy of the "
                    f"{source.dataset} files") from None
            if source.progress is not None:
                source.progress(f"{name}: the transfer broke off {broken.told()}; trying again "
                                f"in {delay:g} s")
            time.sleep(delay)
    if actual != expected:
        raise DataError(
            f"downloaded {name} from {url} has SHA-256 {actual}, expected {expected}; the "
            f"server's file is not the known {source.dataset} release, so nothing was written"
        )
    return out.tell()


def _transfer(url: str, out: BinaryIO, dataset: str) -> str:
    """One try: stream `url` into `out`, return the SHA-256 of what arrived; _BrokenOff when
    the connection dropped mid-file or closed before Content-Length bytes, DataError when
    there was no file to transfer (an HTTP error, no connection)."""
    digest = hashlib.sha256()
    received = 0
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            length = _content_length(response)
            try:
                while chunk := response.read(1 << 16):
                    digest.update(chunk)
                    out.write(chunk)
                    received += len(chunk)
            except _NETWORK_ERRORS as error:
                raise _BrokenOff(received, length, _reason(error)) from None
    except ConnectionResetError as error:  # dropped before the body (no response, a reset)
        raise _BrokenOff(received, None, _reason(error)) from None
    except urllib.error.HTTPError as error:
        raise DataError(
            f"could not download {url}: HTTP {error.code} {error.reason}; check --base-url, "
            f"or use --from DIR with a local copy of the {dataset} files"
        ) from None
    except _NETWORK_ERRORS as error:
        raise DataError(
            f"could not download {url} ({_reason(error)}); without network access, "
            f"use --from DIR with a local copy of the {dataset} files"
        ) from None
    # http.client ends a body that stops short of Content-Length without an error: count it.
    if length is not None and received < length:
        raise _BrokenOff(received, length, "the server closed the connection early")
    return digest.hexdigest()


def _content_length(response) -> int | None:
    """The Content-Length the server announced, or None (none, or not a number)."""
    try:
        return int(response.headers["Content-Length"])
    except (TypeError, ValueError):
        return None


def _reason(error: Exception) -> str:
    """Why a transfer failed, in words where we know them."""
    if isinstance(error, http.client.RemoteDisconnected):
        return "the server closed the connection without an answer"
    if isinstance(error, ConnectionResetError):
        return "the connection was reset"
    if isinstance(error, http.client.IncompleteRead):
        return "the server closed the connection early"
    if isinstance(error, TimeoutError):
        return f"no data for {TIMEOUT_S} s"
    reason = getattr(error, "reason", None) or error
    return str(reason) or type(error).__name__
