"""Errors that mean "the user gave us something wrong", each with a one-sentence message.

The CLI prints these as a single line (no traceback); everything else is a bug and keeps its
traceback. Each subclass is also a ValueError so library users can catch the familiar type.
"""


class UserError(ValueError):
    """A mistake in the user's input: the message names the file, line or option."""


class ConfigError(UserError):
    """A bad configuration key or value."""


class DataError(UserError):
    """A missing, unreadable or inconsistent data file."""


class CheckpointError(UserError):
    """A checkpoint that is missing, damaged, or belongs to another model."""


class WriteError(UserError):
    """An output that cannot be written: full disk, read-only or missing folder, permission."""
