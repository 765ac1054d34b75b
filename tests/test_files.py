"""Writing outputs: a failed write is one sentence naming the path, and never leaves the old
file damaged or a half-written new one."""

import errno
import os

import pytest

from attnlab.errors import WriteError
from attnlab.files import atomic_output, check_output_path, describe, writing


def test_a_finished_write_replaces_the_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with atomic_output(path) as file:
        file.write("new\n")
        assert path.read_text() == "old\n"  # nothing visible until the end
    assert path.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temporary left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "out.txt"
    path.write_bytes(b"old\n")
    with pytest.raises(RuntimeError), atomic_output(path) as file:
        file.write("half")
        raise RuntimeError("interrupted")
    assert path.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


@pytest.mark.parametrize(("code", "words"), [
    (errno.ENOSPC, "no space left"), (errno.EROFS, "the file system is read-only"),
    (errno.EACCES, "permission"),
])
def test_os_errors_become_one_sentence(tmp_path, monkeypatch, code, words):
    path = tmp_path / "out.txt"
    path.write_text("old\n")

    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(WriteError, match=f"cannot write {path}: {words}"):
        with atomic_output(path) as file:
            file.write("new\n")
    assert path.read_text() == "old\n"


def test_bad_output_paths_are_named_before_any_work(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(WriteError, match="file is a file, not a folder"):
        check_output_path(tmp_path / "file" / "out.png")
    with pytest.raises(WriteError, match="folder .*missing does not exist; create it first"):
        check_output_path(tmp_path / "missing" / "out.png")
    with pytest.raises(WriteError, match="it is a folder, not a file"):
        check_output_path(tmp_path)


def test_writing_names_the_path_and_keeps_other_errors():
    with pytest.raises(WriteError, match="cannot write x.png: no space left on the device"):
        with writing("x.png"):
            raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(KeyError), writing("x.png"):
        raise KeyError("not a file problem")
    assert describe(OSError(errno.EIO, "I/O error"), "y") == "cannot write y: I/O error"


def test_links_devices_and_modes(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with atomic_output(link) as file:
        file.write("new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)  # the file keeps its mode
    with atomic_output(os.devnull) as file:  # a device is written in place, never replaced
        file.write("gone\n")
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)
