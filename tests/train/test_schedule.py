"""Learning-rate schedules and the training config's own checks."""

import math

import pytest

from attnlab.config import config_from_dict, config_to_dict
from attnlab.errors import ConfigError
from attnlab.train import (
    PlateauSchedule,
    Schedule,
    TrainConfig,
    WarmupDecaySchedule,
    build_schedule,
)


def test_constant():
    assert [Schedule(0.1).lr(step) for step in (1, 100)] == [0.1, 0.1]


def test_warmup_then_inverse_sqrt():
    schedule = WarmupDecaySchedule(1.0, warmup_steps=4)
    assert [schedule.lr(step) for step in (1, 2, 4, 16)] == [0.25, 0.5, 1.0, 0.5]
    assert schedule.lr(100) == pytest.approx(math.sqrt(4 / 100))


def test_plateau_cuts_after_patience_and_saves_its_state():
    schedule = PlateauSchedule(1.0, factor=0.5, patience=2, mode="max", min_lr=0.2)
    changed = [schedule.observe(value) for value in (1.0, 2.0, 1.5, 1.9, 3.0, 1.0, 1.0)]
    assert changed == [False, False, False, True, False, False, True]
    assert schedule.lr(1) == 0.25
    copy = PlateauSchedule(1.0, factor=0.5, patience=2, mode="max", min_lr=0.2)
    copy.load_state_dict(schedule.state_dict())
    assert (copy.observe(0.0), copy.observe(0.0), copy.lr(1)) == (False, True, 0.2)


def test_build_schedule_from_config():
    config = config_from_dict({"lr": 2, "schedule": {"kind": "warmup_decay", "warmup_steps": 2}},
                              TrainConfig)
    assert config_from_dict(config_to_dict(config), TrainConfig) == config
    assert build_schedule(config).lr(1) == 1.0


@pytest.mark.parametrize("changes, message", [
    ({"lr": 0.0}, "train.lr must be positive"),
    ({"schedule": {"kind": "plateau"}}, "plateau needs train.early_stopping.metric"),
    ({"max_epochs": None}, "needs a budget"),
])
def test_train_config_checks(changes, message):
    with pytest.raises(ConfigError, match=message):
        config_from_dict(changes, TrainConfig, origin="x.yaml")
