"""The version of attnlab: one place, read by setuptools (pyproject.toml) and imported by
whatever records it (checkpoints, exported models, `attnlab --version`)."""

__version__ = "0.1.0"
