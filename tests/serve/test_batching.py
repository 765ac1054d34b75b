"""The micro-batcher alone: grouping by key, the window, max_batch, a bounded queue, per-item
errors, cancelled requests dropped, closing."""

import threading
import time

import pytest

from attnlab.serve.batching import MicroBatcher, QueueFull


class Recorder:
    """A batch function that records its batches (and can hold the worker until released)."""

    def __init__(self, hold: bool = False):
        self.batches: list[list] = []
        self.started, self.release = threading.Event(), threading.Event()
        if not hold:
            self.release.set()

    def __call__(self, items):
        self.started.set()
        self.release.wait(10)
        self.batches.append(list(items))
        return [item * 10 if item >= 0 else ValueError(f"negative {item}") for item in items]


def batcher(**settings):
    return MicroBatcher(**{"queue_size": 16, "window_s": 0.05, "max_batch": 8, **settings})


def test_jobs_of_one_key_within_the_window_are_one_batch():
    work, jobs = Recorder(), batcher()
    futures = [jobs.submit("a", item, work) for item in range(5)]
    assert [f.result(5) for f in futures] == [0, 10, 20, 30, 40]
    assert work.batches == [[0, 1, 2, 3, 4]] and jobs.batches == 1
    jobs.close()


def test_keys_never_share_a_batch_and_the_oldest_key_goes_first():
    hold, work, jobs = Recorder(hold=True), Recorder(), batcher()
    jobs.submit("hold", 0, hold)
    assert hold.started.wait(5)
    futures = [jobs.submit(key, item, work) for key, item in
               [("a", 1), ("b", 2), ("a", 3), ("b", 4), ("c", 5)]]
    hold.release.set()
    assert [f.result(5) for f in futures] == [10, 20, 30, 40, 50]
    assert work.batches == [[1, 3], [2, 4], [5]]
    jobs.close()


def test_max_batch_splits_and_a_lone_job_waits_only_the_window():
    work, jobs = Recorder(), batcher(max_batch=2, window_s=0.02)
    hold = Recorder(hold=True)
    jobs.submit("hold", 0, hold)
    assert hold.started.wait(5)
    futures = [jobs.submit("a", item, work) for item in range(5)]
    hold.release.set()
    [f.result(5) for f in futures]
    assert work.batches == [[0, 1], [2, 3], [4]] and jobs.batches == 4
    # A lone job is answered although max_batch jobs never come: it waits only the window.
    assert jobs.submit("a", 7, work).result(5) == 70
    assert work.batches[-1] == [7] and jobs.batches == 5
    jobs.close()


def test_an_idle_worker_waits_the_window_for_company():
    # A window far longer than the test: only max_batch jobs arriving can end the wait.
    work, jobs = Recorder(), batcher(max_batch=2, window_s=60)
    first = jobs.submit("a", 1, work)
    time.sleep(0.05)  # time for a worker that did not wait to run the job alone
    assert not first.done() and jobs.pending() == 1
    second = jobs.submit("a", 2, work)
    assert (first.result(5), second.result(5)) == (10, 20)
    assert work.batches == [[1, 2]] and jobs.batches == 1  # two requests, one batch
    jobs.close()


def test_a_full_queue_refuses_and_an_error_fails_only_its_item():
    hold, work, jobs = Recorder(hold=True), Recorder(), batcher(queue_size=2)
    jobs.submit("hold", 0, hold)
    assert hold.started.wait(5)
    good, bad = jobs.submit("a", 1, work), jobs.submit("a", -1, work)
    with pytest.raises(QueueFull):
        jobs.submit("a", 2, work)
    hold.release.set()
    assert good.result(5) == 10
    with pytest.raises(ValueError, match="negative -1"):
        bad.result(5)
    jobs.close()


def test_a_failing_batch_fails_its_requests_and_the_worker_lives_on():
    jobs = batcher(window_s=0.0)

    def broken(items):
        raise RuntimeError("bug")

    with pytest.raises(RuntimeError, match="bug"):
        jobs.submit("a", 1, broken).result(5)
    with pytest.raises(RuntimeError, match="gave 0 results"):
        jobs.submit("a", 1, lambda items: []).result(5)
    assert jobs.submit("a", 2, Recorder()).result(5) == 20
    jobs.close()


def test_cancelled_jobs_are_dropped_and_close_fails_the_queue():
    hold, work, jobs = Recorder(hold=True), Recorder(), batcher()
    jobs.submit("hold", 0, hold)
    assert hold.started.wait(5)
    cancelled, kept = jobs.submit("a", 1, work), jobs.submit("a", 2, work)
    assert cancelled.cancel()
    hold.release.set()
    assert kept.result(5) == 20 and work.batches == [[2]]
    hold2 = Recorder(hold=True)
    jobs.submit("hold", 0, hold2)
    assert hold2.started.wait(5)
    left = jobs.submit("a", 3, work)
    closing = threading.Thread(target=jobs.close)
    closing.start()
    with pytest.raises(RuntimeError, match="shutting down"):
        left.result(5)
    hold2.release.set()
    closing.join(5)
    assert not closing.is_alive()
    with pytest.raises(RuntimeError, match="closed"):
        jobs.submit("a", 4, work)
