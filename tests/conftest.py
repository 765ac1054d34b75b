"""Test-wide settings: one torch thread per worker, derandomized hypothesis on CI, and the
`slow` mark on every test that uses a trained run."""

import os

import pytest
import torch
from hypothesis import HealthCheck, settings

torch.set_num_threads(1)

settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

# The session fixtures that train a model (tests/{cli,export,serve}/conftest.py; the notebook
# tests reuse serve's), and the fixtures built on them. A test using any of them, directly or
# through another fixture, is marked slow: `make test-fast` (pytest -m "not slow") never trains.
TRAINED_RUNS = {"dates_run", "deen_run", "lm_run", "caption_run", "pieces_run", "plain_run",
                "shapes_run", "lstmn_run"}


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects
def pytest_collection_modifyitems(items):
    for item in items:
        if TRAINED_RUNS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
