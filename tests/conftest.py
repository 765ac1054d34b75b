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
                "shapes_run", "lstmn_run", "dates_reverse_run"}


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects
def pytest_collection_modifyitems(items):
    for item in items:
        if TRAINED_RUNS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


class FastLoop:
    """Under -m "not slow", a test that asks for a trained run by name at run time
    (request.getfixturevalue, which the mark above cannot see) is skipped, not left to train.
    A plugin of its own: a conftest's hooks do not reach the setup of session fixtures."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_fixture_setup(self, fixturedef, request):
        if fixturedef.argname in TRAINED_RUNS:
            name = fixturedef.argname

            def skipped(**_):  # pytest calls it in place of the fixture and keeps the skip
                pytest.skip(f"needs the trained run {name}: mark the test slow; `make test` "
                            f"runs it")

            fixturedef.func = skipped


def pytest_configure(config):
    if "not slow" in (config.getoption("markexpr") or ""):
        config.pluginmanager.register(FastLoop(), "attnlab-fast-loop")
