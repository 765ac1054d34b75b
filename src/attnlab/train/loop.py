"""The generic training loop: any Task, one process or many under torchrun.

    result = train(task, config.train, RunDir("runs/x"), resume=args.resume)

Each step: batch -> task.loss (under autocast for bf16/fp16) -> backward -> clip -> lr from
the schedule -> Adam. Every `validate_every` steps (and at the end) rank 0 validates, `last` is
saved and `best` too when the early-stopping metric improved; with keep_checkpoints each save
of `last` also keeps a step checkpoint (averaging.py). A resumed run restores the model,
optimiser, fp16 loss scale, schedule, sampler position, RNG states and counters, and continues
exactly as if never stopped.

On a GPU the host never waits for the device inside a step: the batch is copied from pinned
memory asynchronously (device.py), and the loss, token counts, gradient norm and whether the
loss stayed finite are summed on the device (monitor.TrainWindow). They are read at the sync
points: every `log_every` steps, before each validation or checkpoint, and when the budget or a
signal ends the run. Between them a signal or the time budget still stops one process at once;
several CUDA processes agree on stopping at the sync points (on the CPU, at every step).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import torch

from attnlab.errors import ConfigError, WriteError
from attnlab.files import describe

from . import distributed
from .averaging import keep_step
from .checkpoint import RunDir
from .config import TrainConfig
from .device import Precision, to_device
from .monitor import METRICS_FILE, Monitor, TrainWindow
from .rng import rng_state, seed_everything
from .schedule import build_schedule, is_better
from .signals import StopSignals
from .state import Progress, restore_training_state, training_state
from .task import Task

TASK_MEMBERS = ("model", "sampler", "make_batch", "loss", "validate", "signature")
STOP_REASONS = ("max_steps", "max_epochs", "time", "early_stopping", "target", "interrupted")

OPTIMIZERS = {
    # fused: one kernel over all parameters (3x faster steps than the per-tensor loop on CPU)
    "adam": lambda params, c: torch.optim.Adam(params, lr=c.lr, betas=c.betas,
                                               weight_decay=c.weight_decay, fused=True),
}


@dataclass
class TrainResult:
    """steps: updates done in total; epochs: complete passes; stopped_by: one of STOP_REASONS."""

    steps: int
    epochs: int
    best_metric: float | None
    stopped_by: str
    last_metrics: dict[str, float]


def train(task: Task, config: TrainConfig, run_dir: RunDir, *, resume: bool = False,
          progress: bool = True) -> TrainResult:
    """Train `task.model` until a budget, early stopping or a signal ends the run.

    resume: continue from `run_dir/last` (CheckpointError if there is none, or if it belongs
    to another model). progress: show a bar on a terminal (rank 0 only).
    Under torchrun, every rank calls this with an identically built task. This is the bare
    loop: `run_experiment` is what refuses to train over an existing run.
    """
    context = distributed.setup(config.device)
    try:
        trainer = Trainer(task, config, run_dir, context)
        trainer.prepare(resume)
        return trainer.fit(progress)
    finally:
        distributed.teardown(context)


@contextlib.contextmanager
def writing_logs(run_dir: RunDir):
    """An OSError writing metrics.jsonl or TensorBoard's files becomes one WriteError sentence
    naming the file (or the run directory, when the error does not say which)."""
    try:
        yield
    except OSError as error:
        raise WriteError(describe(error, error.filename or run_dir.path)) from None


class Trainer:
    """One training run in two steps: `prepare` checks and restores (or seeds) and writes
    nothing; `fit` runs the loop, which writes checkpoints, metrics.jsonl and TensorBoard."""

    def __init__(self, task: Task, config: TrainConfig, run_dir: RunDir,
                 context: distributed.DistContext):
        missing = [name for name in TASK_MEMBERS if not hasattr(task, name)]
        if missing:
            raise TypeError(f"{type(task).__name__} is not a Task: it lacks "
                            f"{', '.join(missing)}")
        if config.threads is not None:
            torch.set_num_threads(config.threads)
        self.task, self.config, self.run_dir, self.context = task, config, run_dir, context
        self.precision = Precision(config.precision, context.device)
        self.model = task.model.to(context.device)
        named = [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]
        self.names, self.params = [n for n, _ in named], [p for _, p in named]
        self.optimizer = OPTIMIZERS[config.optimizer](self.params, config)
        self.schedule = build_schedule(config)
        self.signature = task.signature()
        self.progress = Progress()
        self.window = TrainWindow(context.device)
        # several CUDA processes agree on stopping only at sync points (the agreement waits
        # for the GPU); on the CPU reading a flag costs nothing, so they agree every step
        self.agree_each_step = context.is_distributed and context.device.type == "cpu"
        self.resumed = False
        self.monitor: Monitor | None = None

    @property
    def _live_monitor(self) -> Monitor:
        """The monitor `fit` opened: everything that reports runs inside fit."""
        if self.monitor is None:
            raise RuntimeError("the monitor opens in fit(); nothing reports before it")
        return self.monitor

    def prepare(self, resume: bool) -> None:
        """Restore `last` (every check of it passes first) or seed afresh."""
        if resume:
            checkpoint = self.run_dir.load_checkpoint("last", self.model, self.signature)
            self.progress = restore_training_state(
                checkpoint, self.optimizer, self.names, self.config, self.schedule,
                self.task.sampler, self.context, self.precision)
        else:
            seed_everything(self.config.seed + self.context.rank)
        self.resumed = resume

    def fit(self, progress: bool, label: str | None = None) -> TrainResult:
        """Train until a budget, early stopping or a signal ends the run. `label` names the
        run on its progress bar and log lines (e.g. a suite member)."""
        self._start(progress, label)
        with StopSignals() as signals:
            return self.run(signals)

    def _start(self, progress: bool, label: str | None = None) -> None:
        """Wrap for DDP (after loading: DDP broadcasts rank 0's parameters) and open the
        monitor."""
        self.ddp = distributed.wrap_model(self.model, self.context)
        self.ddp.train()
        tensorboard = self.run_dir.tensorboard_dir if self.config.tensorboard else None
        with writing_logs(self.run_dir):
            self.monitor = Monitor(enabled=self.context.is_main, progress=progress,
                                   total=self._total_steps(), initial=self.progress.step,
                                   tensorboard_dir=tensorboard,
                                   metrics_path=self.run_dir.file(METRICS_FILE), label=label)
        if self.resumed:
            self._live_monitor.message(f"resumed {self.run_dir.path} at step {self.progress.step}")
        if self.context.device.type != "cpu" or self.precision.name != "fp32":
            self._live_monitor.message(f"training on {self.context.device} in "
                                       f"{self.precision.name}")
        self._clock_start = time.monotonic()
        self._reset_window()

    def run(self, signals: StopSignals) -> TrainResult:
        try:
            stopped_by = self._stop_reason(signals)
            while stopped_by is None:
                stopped_by = self._run_epoch(signals)
            self._finish(stopped_by)
        finally:
            with writing_logs(self.run_dir):
                self._live_monitor.close()
        p = self.progress
        return TrainResult(p.step, p.epoch, p.best_metric, stopped_by, dict(p.last_metrics))

    def _run_epoch(self, signals: StopSignals) -> str | None:
        sampler = self.task.sampler
        sampler.set_epoch(self.progress.epoch)  # same epoch: keeps a resumed position
        if len(sampler) < self.context.world_size:
            raise ConfigError(f"the training data gives {len(sampler)} batches per epoch, "
                              f"fewer than the {self.context.world_size} processes")
        for indices in distributed.rank_batches(sampler, self.context):
            self._train_step(indices)
            stopped_by = self._after_step(signals)
            if stopped_by is not None:
                return stopped_by
        self.progress.epoch += 1
        return self._stop_reason(signals)

    def _train_step(self, indices: list[int]) -> None:
        """One update on the batch of these examples; nothing in it waits for the device."""
        batch = to_device(self.task.make_batch(indices), self.context.device)
        self.optimizer.zero_grad(set_to_none=True)
        with self.precision.autocast():
            output = self.task.loss(self.ddp, batch)
        self.precision.backward(output.loss)
        if self.config.clip_norm is not None:
            self.precision.unscale(self.optimizer)   # the norm of the true gradients
            norm = torch.nn.utils.clip_grad_norm_(self.params, self.config.clip_norm)
            self.window.add_grad_norm(norm)
        lr = self.schedule.lr(self.progress.step + 1)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.precision.step(self.optimizer)
        self.progress.step += 1
        self.window.add(self.progress.step, output.nll_sum, output.tokens,
                        batch.num_target_tokens, lr)

    def _after_step(self, signals: StopSignals) -> str | None:
        """Log, validate and checkpoint when due; the reason to stop now, if any."""
        step, config = self.progress.step, self.config
        self._live_monitor.step()
        logs, validates = _due(step, config.log_every), _due(step, config.validate_every)
        saves = _due(step, config.checkpoint_every)
        ends = config.max_steps is not None and step >= config.max_steps
        if logs:
            self._log()
        stopped_by = self._stop_reason(signals, sync=logs or validates or saves or ends)
        if stopped_by == "interrupted":
            return stopped_by   # no validation: the user wants out; _finish saves `last`
        if validates:
            stop = self._validate()
            if stop is not None:
                return stop
        elif saves:
            self._save_last()
        return stopped_by

    def _stop_reason(self, signals: StopSignals, sync: bool = True) -> str | None:
        """Budget and signals; rank-local conditions are agreed on by all ranks. Away from a
        sync point (`sync` False) nothing is read from the device: one process stops there
        only for a signal or the time budget, several only when they agree every step."""
        p, config = self.progress, self.config
        out_of_time = (config.max_minutes is not None
                       and self._elapsed() >= config.max_minutes * 60)
        interrupted = signals.received is not None
        if not (sync or self.agree_each_step):
            if self.context.is_distributed or not (interrupted or out_of_time):
                return None
        bad_step = self.window.nonfinite_step()
        interrupted, out_of_time, diverged = distributed.any_rank(
            self.context, interrupted, out_of_time, bad_step is not None)
        if diverged:  # raised on every rank together, so none waits for the others forever
            saved = f"`last` holds step {p.saved_at}" if p.saved_at >= 0 else "nothing saved"
            where = f"at step {bad_step}" if bad_step is not None else \
                f"on another process by step {p.step}"
            raise FloatingPointError(f"the training loss is not finite {where} ({saved}): "
                                     f"lower train.lr or set train.clip_norm")
        if interrupted:
            return "interrupted"
        if config.max_steps is not None and p.step >= config.max_steps:
            return "max_steps"
        if out_of_time:
            return "time"
        if config.max_epochs is not None and p.epoch >= config.max_epochs:
            return "max_epochs"
        return None

    def _finish(self, stopped_by: str) -> None:
        """Validate the final model (unless interrupted) and make sure `last` holds it."""
        p = self.progress
        if stopped_by != "interrupted" and p.validated_at != p.step:
            self._validate()
        if p.saved_at != p.step:
            self._save_last()
        self._live_monitor.message(f"stopped by {stopped_by} at step {p.step}, epoch {p.epoch}")

    def _validate(self) -> str | None:
        """Rank 0 validates, all ranks learn the metrics; the reason to stop now ("target":
        the metric reached early_stopping.target, "early_stopping": patience ran out), if any."""
        metrics = None
        if self.context.is_main:
            try:
                metrics = self._validate_here()
            except BaseException:
                distributed.broadcast(self.context, None)  # release the waiting ranks
                raise
        metrics = distributed.broadcast(self.context, metrics)
        if metrics is None:
            raise RuntimeError("validation failed on rank 0 (its traceback says why)")
        p = self.progress
        p.last_metrics, p.validated_at = metrics, p.step
        improved = self._track(p.last_metrics)
        self._save_last()
        if improved:
            self._save("best", training_state=None)
        self._reset_window()   # validation time is not training throughput
        stopping = self.config.early_stopping
        if stopping.target is not None and stopping.metric is not None:
            value = p.last_metrics[stopping.metric]   # NaN reaches no target
            if value >= stopping.target if stopping.mode == "max" else value <= stopping.target:
                return "target"
        if stopping.patience is not None and p.bad_validations >= stopping.patience:
            return "early_stopping"
        return None

    def _validate_here(self) -> dict[str, float]:
        model = distributed.unwrap(self.ddp)
        model.eval()
        with torch.no_grad():
            validation = self.task.validate(model)
        model.train()
        with writing_logs(self.run_dir):
            self._live_monitor.validation(self.progress.step, validation, self._elapsed())
        return {name: float(value) for name, value in validation.metrics.items()}

    def _track(self, metrics: dict[str, float]) -> bool:
        """Update best/patience and the plateau schedule; True when the metric improved."""
        name, p = self.config.early_stopping.metric, self.progress
        if name is None:
            return False
        if name not in metrics:
            raise ConfigError(f"train.early_stopping.metric is {name!r} but validation "
                              f"returned only {', '.join(metrics) or 'no metrics'}")
        value = metrics[name]
        if self.schedule.observe(value):
            self._live_monitor.message(f"learning rate now {self.schedule.lr(p.step + 1):.3g}")
        if is_better(value, p.best_metric, self.config.early_stopping.mode):
            p.best_metric, p.bad_validations = value, 0
            return True
        p.bad_validations += 1
        return False

    def _log(self) -> None:
        """The window's figures: the one place a step's numbers leave the device."""
        window = self.window
        nll, tokens = window.sums()   # waits for the device: the time below is the GPU's
        nll, tokens, batch_tokens = distributed.sum_ranks(self.context, nll, tokens,
                                                          window.batch_tokens)
        seconds = max(time.monotonic() - window.start, 1e-9)
        values = {"loss": nll / max(tokens, 1), "lr": window.lr,
                  "tokens_per_second": batch_tokens / seconds,
                  "ms_per_step": 1000 * seconds / max(window.steps, 1)}
        if self.config.clip_norm is not None:
            values["grad_norm"] = float(window.grad_norm)   # the window's largest
        scale = self.precision.loss_scale()
        if scale is not None:
            values["loss_scale"] = scale
        with writing_logs(self.run_dir):
            self._live_monitor.train_scalars(self.progress.step, values)
        self._reset_window()

    def _reset_window(self) -> None:
        self.window.reset(self.schedule.lr(self.progress.step + 1))

    def _elapsed(self) -> float:
        return self.progress.elapsed_seconds + time.monotonic() - self._clock_start

    def _total_steps(self) -> int | None:
        """What the bar counts to: max_steps, or the steps max_epochs will take (estimated:
        token batching can give each epoch a slightly different number of batches)."""
        totals = []
        if self.config.max_steps is not None:
            totals.append(self.config.max_steps)
        if self.config.max_epochs is not None:
            per_epoch = len(self.task.sampler) // self.context.world_size
            totals.append(per_epoch * self.config.max_epochs)
        return min(totals) if totals else None

    def _save_last(self) -> None:
        # Every rank's RNG state: each draws its own dropout masks.
        rngs = distributed.gather(self.context, rng_state())
        self.progress.elapsed_seconds = self._elapsed()
        self._clock_start = time.monotonic()
        self.progress.saved_at = self.progress.step
        state = training_state(self.optimizer, self.config, self.schedule, self.task.sampler,
                               self.progress, rngs, self.precision.state_dict())
        self._save("last", training_state=state)

    def _save(self, name: str, training_state: dict | None) -> None:
        """Rank 0 writes; the others wait, so nobody reads a half-written checkpoint."""
        if self.context.is_main:
            p = self.progress
            info = {"step": p.step, "epoch": p.epoch, "metrics": p.last_metrics,
                    "elapsed_seconds": round(p.elapsed_seconds, 3)}
            self.run_dir.save_checkpoint(name, self.model, self.signature,
                                         training_state=training_state, info=info)
            if name == "last" and self.config.keep_checkpoints:  # for attnlab average
                keep_step(self.run_dir, p.step, self.model, self.signature, info,
                          self.config.keep_checkpoints)
        distributed.barrier(self.context)


def _due(step: int, every: int | None) -> bool:
    """Whether a thing done every `every` steps (None: never) is done at `step`."""
    return every is not None and step % every == 0
