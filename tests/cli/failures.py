"""A stand-in for a write that fails the way a full disk or a read-only folder makes it fail."""

import os


def fail_with(code):
    """A function that raises OSError(code), to monkeypatch over os.fsync, tempfile.mkstemp..."""

    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    return fail
