"""Writing files so that a failure is one sentence and never leaves a half-written output.

    with atomic_output("out.txt") as file:     # a temporary file, renamed over out.txt at the end
        file.write(text)
    with writing(path):                         # any OSError inside becomes one WriteError sentence
        figure.savefig(path)

`check_outputs` refuses, before any work, an output that is one of a command's inputs (the same
file by inode). Every command that writes uses these, so a full disk, a read-only folder, a
folder that is a file or a missing folder all read the same way: what happened, to which path,
and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from attnlab.errors import WriteError

# What to tell the user for the usual ways a write fails.
ADVICE = {
    errno.ENOSPC: "no space left on the device; free some space or write elsewhere",
    errno.EDQUOT: "the disk quota is exceeded; free some space or write elsewhere",
    errno.EROFS: "the file system is read-only; write elsewhere",
    errno.EACCES: "permission denied; write elsewhere or change the folder's permissions",
    errno.EPERM: "permission denied; write elsewhere or change the folder's permissions",
    errno.ENOENT: "its folder does not exist; create it first",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder, not a file",
    errno.EEXIST: "a file of that name is in the way of a folder",
    errno.ENAMETOOLONG: "the name is too long",
}


def describe(error: OSError, path: str | os.PathLike, action: str = "write") -> str:
    """One sentence: 'cannot write PATH: what happened; what to do'."""
    advice = ADVICE.get(error.errno) if error.errno is not None else None
    return f"cannot {action} {path}: {advice or error.strerror or type(error).__name__}"


@contextlib.contextmanager
def writing(path: str | os.PathLike, action: str = "write") -> Iterator[None]:
    """Turn an OSError raised in the block into a WriteError naming `path`."""
    try:
        yield
    except OSError as error:
        raise WriteError(describe(error, path, action)) from None


def check_output_path(path: str | os.PathLike) -> Path:
    """The path of a file about to be written, checked before any work is done: its folder
    exists and is a folder, and the path is not a folder. WriteError otherwise."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise WriteError(f"cannot write {path}: it is a folder, not a file")
    for parent in (folder, *folder.parents):
        if parent.exists() and not parent.is_dir():
            raise WriteError(f"cannot write {path}: {parent} is a file, not a folder")
    if not folder.is_dir():
        raise WriteError(f"cannot write {path}: its folder {folder} does not exist; create it "
                         f"first")
    return path


def check_outputs(inputs: Mapping[str, str | int | None],
                  outputs: Mapping[str, str | None]) -> None:
    """Refuse, before any work, an output that cannot be written (its folder is missing or is a
    file, it is a folder: files.check_output_path) or that is one of the `inputs` or another
    output: the same file by device and inode (a hard or symbolic link too), not by name.
    Keys name the options ("--output"); an input may be a file descriptor (standard input)."""
    given = [(option, path) for option, path in outputs.items() if path is not None]
    for _, path in given:
        check_output_path(path)
    for number, (option, path) in enumerate(given):
        for other, source in inputs.items():
            if source is not None and _same_file(path, source):
                where = other if isinstance(source, int) else f"{other} {source}"
                raise WriteError(f"{option} {path} is the same file as {where}: writing it "
                                 f"would destroy the input, so write to another file")
        for other, source in given[:number]:
            if _same_file(path, source):
                raise WriteError(f"{option} {path} is the same file as {other} {source}: give "
                                 f"each output a file of its own")


def _regular_file(target: str | int) -> tuple[int, int] | None:
    """(device, inode) of the regular file a path or descriptor names, else None. Devices
    and pipes (/dev/null, a terminal) are left out: writing them destroys nothing."""
    try:
        status = os.fstat(target) if isinstance(target, int) else os.stat(target)
    except (OSError, ValueError):
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISREG(status.st_mode) else None


def _same_file(path: str, other: str | int) -> bool:
    mine, theirs = _regular_file(path), _regular_file(other)
    if mine is not None or theirs is not None:
        return mine == theirs
    # Two outputs that do not exist yet are the same file when they name the same path.
    return (isinstance(other, str) and not os.path.exists(path)
            and os.path.realpath(path) == os.path.realpath(other))


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, mode: str = "w",
                  encoding: str | None = "utf-8") -> Iterator[IO]:
    """Write `path` whole or not at all: a temporary file beside it, renamed over it when the
    block ends without an error (removed otherwise), so `path` is either its old self or
    complete. Text mode writes "\n". A symbolic link is written through to the file it names,
    which keeps its permission bits (a new file gets the umask's). A path that exists and is
    not a regular file (/dev/null, /dev/stdout, a named pipe) is written in place: renaming over
    it would replace the device itself, and there is no old content to keep."""
    path = check_output_path(path)
    options: dict[str, Any] = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
    if path.exists() and not path.is_file():
        with writing(path), open(path, mode, **options) as file:
            yield file
        return
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    with writing(path):
        descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                                 dir=target.parent)
    try:
        with writing(path), open(descriptor, mode, **options) as file:
            os.fchmod(file.fileno(), _file_mode(target))  # mkstemp's file is private (0600)
            yield file
            file.flush()
            os.fsync(file.fileno())
        with writing(path):
            os.replace(temporary, target)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _file_mode(path: Path) -> int:
    """The permission bits of `path`, or those of a new file (0666 less the umask)."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
