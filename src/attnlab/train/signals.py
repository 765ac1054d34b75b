"""Stop cleanly on Ctrl-C or SIGTERM: finish the current step, save `last`, return."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """While active, SIGINT and SIGTERM only set `received`; the loop polls it after each step.

    A second SIGINT raises KeyboardInterrupt at once, for a user who will not wait. Handlers
    can only be installed from the main thread; elsewhere this does nothing.
    """

    def __init__(self):
        self.received: int | None = None
        # what signal.signal returns: a handler, SIG_DFL / SIG_IGN, or None (not set from Python)
        self._previous: dict[int, Callable[[int, FrameType | None], Any] | int | None] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc_info) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()

    def _handle(self, number: int, frame) -> None:
        if self.received is not None and number == signal.SIGINT:
            raise KeyboardInterrupt
        self.received = number
