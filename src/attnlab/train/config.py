"""What the training loop reads: optimiser, schedule, budget, cadence, early stopping.

In YAML this is the `train:` section of an experiment config, e.g.

    train:
      lr: 1.0e-3
      schedule: {kind: plateau, factor: 0.5, patience: 2}
      max_epochs: 20
      validate_every: 500
      early_stopping: {metric: bleu, mode: max, patience: 5}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from attnlab.config import did_you_mean
from attnlab.errors import ConfigError

_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")


def check_device_name(name: object) -> None:
    """ValueError unless `name` is auto, cpu, cuda or cuda:N (what train.device and every
    --device accept); whether the machine has that device is checked when it is used."""
    if not isinstance(name, str) or not _DEVICE.fullmatch(name):
        raise ValueError(f"must be auto, cpu, cuda or cuda:N, got {name!r}")


@dataclass
class ScheduleConfig:
    """How the learning rate moves away from `TrainConfig.lr`.

    - constant: lr throughout.
    - plateau: multiply lr by `factor` after `patience` validations in a row without
      improvement of the early-stopping metric (Luong et al. 2015 halve it in a similar way),
      never below `min_lr`.
    - warmup_decay: linear warmup over `warmup_steps` updates to lr, then inverse-square-root
      decay, `lr * sqrt(warmup_steps / step)` (Vaswani et al. 2017, eq. 3, with lr as peak).
    """

    kind: Literal["constant", "plateau", "warmup_decay"] = "constant"
    factor: float = 0.5         # plateau: lr multiplier on a plateau
    patience: int = 2           # plateau: validations without improvement before a cut
    min_lr: float = 0.0         # plateau: floor
    warmup_steps: int = 4000    # warmup_decay: updates until the peak


@dataclass
class EarlyStoppingConfig:
    """The validation metric that decides the `best` checkpoint, plateau cuts and stopping."""

    metric: str | None = None   # key of Validation.metrics, e.g. "bleu"; None = no best/stopping
    mode: Literal["max", "min"] = "max"   # "max" for BLEU/accuracy, "min" for loss/perplexity
    patience: int | None = None  # validations without improvement before stopping; None = never
    target: float | None = None  # stop once a validation reaches it (>= for max, <= for min)


@dataclass
class GuidedAlignmentConfig:
    """Guided alignment (Chen et al. 2016; Garg et al. 2019): `weight` times a cost between
    the attention rows the decoder uses and a word aligner's links (a Pharaoh file, one line
    per training pair, as `attnlab align` writes it) is added to the training loss.

    cost: ce, the cross-entropy -sum_i g_{t,i} log a_{t,i} against each target unit's links
    made a distribution g_t (Garg et al. 2019); mse, sum_i (a_{t,i} - g_{t,i})^2 (Chen et al.
    2016); both averaged over the target pieces that have links."""

    links: str  # the links file; required
    weight: float = 1.0
    cost: Literal["ce", "mse"] = "ce"

    def __post_init__(self):
        if not self.links:
            raise ConfigError("train.guided_alignment.links must name the links file (write "
                              "it with attnlab align --src FILE --tgt FILE --output FILE)")
        if not self.weight > 0:
            raise ConfigError(f"train.guided_alignment.weight must be positive, got "
                              f"{self.weight}")


@dataclass
class TrainConfig:
    """Everything the generic loop needs; the model and data sections live elsewhere."""

    # Optimiser: Adam (Kingma & Ba 2015); weight_decay is the L2 term Adam adds to gradients.
    optimizer: Literal["adam"] = "adam"
    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    weight_decay: float = 0.0
    clip_norm: float | None = 1.0   # max global gradient L2 norm; None = no clipping
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)

    # Budget: training stops at the first limit reached (None = no such limit).
    max_steps: int | None = None      # optimiser updates
    max_epochs: int | None = 10       # passes over the training data
    max_minutes: float | None = None  # wall-clock, summed over resumed runs

    # Cadence, in updates. Validation also runs when training ends (unless interrupted).
    validate_every: int | None = 1000   # None = only at the end
    checkpoint_every: int | None = 1000  # save `last`; it is also saved after each validation
    # also keep the weights of the newest N saves of `last` in checkpoints/step-*/, for
    # `attnlab average`; None = keep none
    keep_checkpoints: int | None = None
    log_every: int = 100                # progress bar and TensorBoard scalars
    tensorboard: bool = True            # event files in <run_dir>/tensorboard

    early_stopping: EarlyStoppingConfig = field(default_factory=EarlyStoppingConfig)
    # train the attention towards an aligner's links (translation); None = no such loss
    guided_alignment: GuidedAlignmentConfig | None = None

    seed: int = 1                 # training randomness (dropout, sampling); rank r uses seed + r
    threads: int | None = None    # torch intra-op threads; None = leave torch's choice
    # auto: CUDA when torch sees a GPU, else the CPU; cuda: under torchrun each rank takes
    # cuda:LOCAL_RANK; cuda:N one GPU.
    device: str = "auto"
    # fp32; bf16 or fp16: mixed precision, autocast around the forward pass and the loss with
    # fp32 weights (Micikevicius et al. 2018); fp16 adds a gradient scaler and needs CUDA.
    precision: Literal["fp32", "bf16", "fp16"] = "fp32"

    def __post_init__(self):
        positive = {"lr": self.lr, "log_every": self.log_every, "max_steps": self.max_steps,
                    "max_epochs": self.max_epochs, "max_minutes": self.max_minutes,
                    "validate_every": self.validate_every, "threads": self.threads,
                    "checkpoint_every": self.checkpoint_every, "clip_norm": self.clip_norm,
                    "keep_checkpoints": self.keep_checkpoints}
        for name, value in positive.items():
            if value is not None and value <= 0:
                raise ConfigError(f"train.{name} must be positive, got {value}")
        if self.schedule.kind == "plateau" and self.early_stopping.metric is None:
            raise ConfigError("train.schedule.kind=plateau needs train.early_stopping.metric "
                              "to watch")
        if self.schedule.kind == "warmup_decay" and self.schedule.warmup_steps < 1:
            raise ConfigError("train.schedule.warmup_steps must be at least 1 for warmup_decay")
        if self.early_stopping.target is not None and self.early_stopping.metric is None:
            raise ConfigError("train.early_stopping.target needs train.early_stopping.metric "
                              "to compare with")
        if self.max_steps is None and self.max_epochs is None and self.max_minutes is None:
            raise ConfigError("train needs a budget: set max_steps, max_epochs or max_minutes")
        try:
            check_device_name(self.device)
        except ValueError as error:
            raise ConfigError(f"train.device {error}") from None
        if self.precision == "fp16" and self.device == "cpu":
            raise ConfigError(FP16_ON_CPU)


FP16_ON_CPU = ("train.precision fp16 runs on CUDA only (its gradient scaler guards fp16's narrow "
               "range on GPUs); on the CPU use bf16 or fp32")


@dataclass
class ExperimentConfig:
    """What every experiment config has: the `train:` section the shared loop reads. Recipes
    add their `data:`, `model:` (and `loss:`, `decode:`) sections."""

    train: TrainConfig = field(default_factory=TrainConfig)
    # The task it trains (a key of attnlab.recipes.RECIPES), read by `attnlab train` to choose
    # the recipe; each recipe's config class defaults it to its own.
    task: str = "translation"
    # The names of the figures its task's validation gives (the keys of Task.validate's
    # metrics): train.early_stopping.metric must be one, checked as the config loads rather than
    # at the first validation; () leaves it to the first validation.
    validation_metrics: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        metric, known = self.train.early_stopping.metric, self.validation_metrics
        if known and metric is not None and metric not in known:
            raise ConfigError(f"train.early_stopping.metric {metric!r} is none that {self.task} "
                              f"validation gives ({', '.join(known)})"
                              f"{did_you_mean(metric, known)}")
