"""The micro-batcher: one worker thread runs the models; requests that arrive within a few
milliseconds of each other and share a key (the same run and search settings) run as one batch.

    batcher = MicroBatcher(queue_size=128, window_s=0.005, max_batch=64)
    future = batcher.submit(("translate", "dates", 5), "3 May 2001", translate_batch)
    answer = await asyncio.wrap_future(future)

`translate_batch(items)` gets the items of one batch and returns one result per item, in order;
a result that is an exception fails only its own request. Jobs wait in a bounded queue (memory
stays flat: past `queue_size`, submit raises QueueFull and the server answers 503); the oldest
job's key is served first, so no key starves.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import torch

BatchFunction = Callable[[list[Any]], list[Any]]


class QueueFull(Exception):
    """The work queue holds queue_size jobs already."""


@dataclass
class _Job:
    key: Hashable
    item: Any
    run: BatchFunction
    future: Future = field(default_factory=Future)
    arrived: float = field(default_factory=time.monotonic)


class MicroBatcher:
    """A bounded queue of jobs and the worker thread that runs them in batches by key."""

    def __init__(self, *, queue_size: int, window_s: float, max_batch: int):
        self.queue_size, self.window_s, self.max_batch = queue_size, window_s, max_batch
        self.batches = 0  # batches run so far (for tests and logs)
        self._jobs: deque[_Job] = deque()
        self._changed = threading.Condition()
        self._worker: threading.Thread | None = None
        self._closed = False

    def submit(self, key: Hashable, item: Any, run: BatchFunction) -> Future:
        """Queue `item` to be run by `run` with the other items of `key`; QueueFull when the
        queue is full. The future holds the item's result (or its exception)."""
        job = _Job(key, item, run)
        with self._changed:
            if self._closed:
                raise RuntimeError("the batcher is closed")
            if len(self._jobs) >= self.queue_size:
                raise QueueFull(f"{len(self._jobs)} requests are waiting already")
            self._jobs.append(job)
            if self._worker is None:  # started on first use: an unused app holds no thread
                self._worker = threading.Thread(target=self._loop, name="attnlab-serve-worker",
                                                daemon=True)
                self._worker.start()
            self._changed.notify()
        return job.future

    def pending(self) -> int:
        """Jobs queued and not yet taken by the worker."""
        with self._changed:
            return len(self._jobs)

    def close(self) -> None:
        """Stop the worker after its current batch; queued jobs fail with RuntimeError."""
        with self._changed:
            self._closed = True
            dropped = list(self._jobs)
            self._jobs.clear()
            self._changed.notify_all()
        for job in dropped:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(RuntimeError("the server is shutting down"))
        if self._worker is not None and self._worker is not threading.current_thread():
            self._worker.join()

    def _loop(self) -> None:
        torch.set_grad_enabled(False)  # per thread: the worker never trains
        while (batch := self._next_batch()) is not None:
            if batch:
                self._run(batch)

    def _next_batch(self) -> list[_Job] | None:
        """Wait for a job, then until the batching window since it arrived closes (or max_batch
        jobs of its key wait); take its key's jobs. None once closed."""
        with self._changed:
            while not self._jobs and not self._closed:
                self._changed.wait()
            if self._closed:
                return None
            first = self._jobs[0]
            deadline = first.arrived + self.window_s
            while (not self._closed and self._count(first.key) < self.max_batch
                   and (left := deadline - time.monotonic()) > 0):
                self._changed.wait(left)
            return self._take(first.key)

    def _count(self, key: Hashable) -> int:
        return sum(job.key == key for job in self._jobs)

    def _take(self, key: Hashable) -> list[_Job]:
        """Remove up to max_batch jobs of `key` (oldest first); drop those already cancelled
        (their client went away)."""
        taken: list[_Job] = []
        kept: deque[_Job] = deque()
        for job in self._jobs:
            (taken if job.key == key and len(taken) < self.max_batch else kept).append(job)
        self._jobs = kept
        return [job for job in taken if job.future.set_running_or_notify_cancel()]

    def _run(self, batch: list[_Job]) -> None:
        self.batches += 1
        try:
            results = batch[0].run([job.item for job in batch])
        except Exception as error:  # a bug in the batch function: every request hears of it
            results = [error] * len(batch)
        if len(results) != len(batch):  # the same bug, caught before the worker dies of it
            results = [RuntimeError(f"batch of {len(batch)} gave {len(results)} results")
                       ] * len(batch)
        for job, result in zip(batch, results, strict=True):
            if isinstance(result, BaseException):
                job.future.set_exception(result)
            else:
                job.future.set_result(result)
