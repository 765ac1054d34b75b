"""attnlab: train, compare and see the classic attention mechanisms."""

__version__ = "0.1.0"
