"""Watching a run: a tqdm bar (loss, tokens/s, ETA) and TensorBoard event files, rank 0 only.

Scalar tags: train/loss (per target token), train/lr, train/tokens_per_second,
train/grad_norm (the window's largest: inf when an fp16 step overflowed and was skipped),
train/loss_scale (fp16 only), valid/<metric>; images valid/<name>; text valid/<name>.
A TrainWindow sums a window's figures on the device; they are read once, at log time.
Without a terminal (a log file, a batch job) the bar is off and the same numbers go to the
`attnlab.train` logger every `log_every` steps. Every logged window and validation is also
appended to `metrics.jsonl` in the run directory, one JSON object a line (a resumed run appends
after the killed run's lines: for a step logged twice, the later line is the resumed run's);
`read_curves` reads it back.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .task import Validation

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

logger = logging.getLogger("attnlab.train")

METRICS_FILE = "metrics.jsonl"
ELAPSED = "elapsed_seconds"   # in a valid record of metrics.jsonl: training time, not a metric


class Monitor:
    """Reports training progress; every method is a no-op when `enabled` is False.

    total: the number of steps the bar counts to (None: unknown, no ETA); initial: the step a
    resumed run starts from. tensorboard_dir: where event files go (None: no TensorBoard).
    """

    def __init__(self, *, enabled: bool, progress: bool, total: int | None, initial: int,
                 tensorboard_dir=None, metrics_path: Path | None = None,
                 label: str | None = None):
        self.enabled = enabled
        self.label = label
        self.bar = None
        self.writer = None
        self.metrics = None
        if not enabled:
            return
        if metrics_path is not None:
            metrics_path.parent.mkdir(parents=True, exist_ok=True)
            self.metrics = open(metrics_path, "a", encoding="utf-8", buffering=1)  # line-buffered
        if progress and sys.stderr.isatty():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True,
                            desc=label)
        if tensorboard_dir is not None:
            # Imported here: tensorboard is heavy, and only rank 0 of a run that wants it pays.
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(log_dir=str(tensorboard_dir))

    def step(self) -> None:
        """One update done."""
        if self.bar is not None:
            self.bar.update(1)

    def train_scalars(self, step: int, values: dict[str, float]) -> None:
        """Log-window averages, e.g. {"loss": 2.3, "lr": 1e-3, "tokens_per_second": 9e3}."""
        if not self.enabled:
            return
        self._record("train", step, values)
        if self.writer is not None:
            for name, value in values.items():
                self.writer.add_scalar(f"train/{name}", value, step)
        shown = {"loss": f"{values['loss']:.3f}", "lr": f"{values['lr']:.2e}",
                 "tok/s": f"{values['tokens_per_second']:,.0f}"}
        if self.bar is not None:
            self.bar.set_postfix(shown, refresh=False)
        else:
            prefix = f"{self.label}: " if self.label else ""
            logger.info("%sstep %d  %s", prefix, step,
                        "  ".join(f"{k} {v}" for k, v in shown.items()))

    def validation(self, step: int, validation: Validation,
                   elapsed_seconds: float | None = None) -> None:
        """Report a validation: metrics as scalars, images, text. `elapsed_seconds` (training
        time so far) goes to metrics.jsonl only: curves against time read it there."""
        if not self.enabled:
            return
        timing = {} if elapsed_seconds is None else {ELAPSED: round(elapsed_seconds, 3)}
        self._record("valid", step, {**validation.metrics, **timing})
        metrics = "  ".join(f"{name} {value:.4g}" for name, value in validation.metrics.items())
        self.message(f"step {step} validation: {metrics}")
        if self.writer is None:
            return
        for name, value in validation.metrics.items():
            self.writer.add_scalar(f"valid/{name}", value, step)
        for name, image in validation.images.items():
            _add_image(self.writer, f"valid/{name}", image, step)
        for name, text in validation.text.items():
            self.writer.add_text(f"valid/{name}", text, step)
        self.writer.flush()

    def message(self, text: str) -> None:
        """A line of text that does not break the bar."""
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            logger.info(text)

    def _record(self, kind: str, step: int, values: dict[str, float]) -> None:
        if self.metrics is not None:
            self.metrics.write(json.dumps({"kind": kind, "step": step, **values}) + "\n")

    def close(self) -> None:
        if self.metrics is not None:
            self.metrics.close()
        if self.bar is not None:
            self.bar.close()
        if self.writer is not None:
            self.writer.close()


class TrainWindow:
    """What happened since the last log line, summed where it was computed: a step adds its
    loss to device tensors without waiting for the GPU, and `sums` waits once, at log time.

    nll, tokens: summed (device tensors, float64); batch_tokens: summed (host); steps;
    grad_norm: the largest (device); lr: the latest; start: time.monotonic() at `reset`.
    first_bad: the first step whose loss was not finite (-1: none yet), noted on the device
    and kept across resets; `nonfinite_step` reads it.
    """

    def __init__(self, device: torch.device, lr: float = 0.0):
        self.device = device
        self.first_bad = torch.full((), -1, dtype=torch.long, device=device)
        self.reset(lr)

    def reset(self, lr: float) -> None:
        """Open a new window (its throughput starts now)."""
        self.nll = torch.zeros((), dtype=torch.float64, device=self.device)
        self.tokens = torch.zeros((), dtype=torch.float64, device=self.device)
        self.grad_norm = torch.zeros((), device=self.device)
        self.batch_tokens, self.steps, self.lr = 0, 0, lr
        self.start = time.monotonic()

    def add(self, step: int, nll_sum: float | torch.Tensor, tokens: int | torch.Tensor,
            batch_tokens: int, lr: float) -> None:
        """Step `step`'s loss (a number or a tensor: either adds without a wait)."""
        self.nll += _detached(nll_sum)
        self.tokens += _detached(tokens)
        self.batch_tokens += batch_tokens
        self.steps += 1
        self.lr = lr
        # NaN and inf stay in a sum, so the window's total says whether any step was bad
        self.first_bad.masked_fill_(self.first_bad.lt(0) & ~self.nll.isfinite(), step)

    def add_grad_norm(self, norm: torch.Tensor) -> None:
        self.grad_norm = torch.maximum(self.grad_norm, norm.detach())

    def nonfinite_step(self) -> int | None:
        """The first step with a non-finite loss, or None (waits for the device)."""
        step = int(self.first_bad)
        return None if step < 0 else step

    def sums(self) -> tuple[float, float]:
        """The summed NLL and target tokens (waits for the device)."""
        return float(self.nll), float(self.tokens)


def _detached(value):
    return value.detach() if isinstance(value, torch.Tensor) else value


def read_curves(path: str | os.PathLike) -> dict[str, list[tuple[float, float]]]:
    """Training curves from a metrics.jsonl the Monitor wrote: "train loss", "train lr" and every
    "valid <metric>", each [(step, value), ...] in file order; {} when there is no file. Lines
    that are not JSON records (a crash mid-write) and non-finite values are skipped."""
    path = Path(path)
    curves: dict[str, list[tuple[float, float]]] = {}
    if not path.is_file():
        return curves
    for text in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(text)
            kind, step = record["kind"], float(record["step"])
        except (ValueError, KeyError, TypeError):
            continue
        names = ("loss", "lr") if kind == "train" else [k for k in record if k not in
                                                         ("kind", "step", ELAPSED)]
        for name in names:
            value = record.get(name)
            if isinstance(value, (int, float)) and math.isfinite(value):
                curves.setdefault(f"{kind} {name}", []).append((step, float(value)))
    return curves


def _add_image(writer: SummaryWriter, tag: str, image: Any, step: int) -> None:
    if isinstance(image, np.ndarray) and image.ndim == 3 and image.shape[2] == 3 \
            and image.dtype == np.uint8:
        writer.add_image(tag, image, step, dataformats="HWC")
    elif hasattr(image, "savefig"):  # a matplotlib Figure
        writer.add_figure(tag, image, step, close=True)
    else:
        raise TypeError(f"validation image {tag!r} must be an (H, W, 3) uint8 array or a "
                        f"matplotlib Figure, got {type(image).__name__}")
