"""The one resolution of a run's decode settings and a user's choices, for every task.

    decode = run.config.decode.overridden(beam=5, n_best=3)   # a copy; None keeps the run's

Every route (YAML, --set, the command line, the explorer, attnlab.load) makes its settings
through a task's decode dataclass and this method, so a setting is named in one place: the
dataclass's field.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Self

from attnlab.config import check_fields
from attnlab.errors import ConfigError


class Overridable:
    """A mixin for a decode settings dataclass: `overridden(**given)`."""

    def overridden(self, **given: Any) -> Self:
        """These settings with those given (not None) in their place, checked as the YAML's
        are (each field's check: decode.alpha >= 0, a finite number) and by the dataclass's
        own __post_init__. A name that is not a setting is a ConfigError naming the settings.
        Without a beam, the run's beam widens to n_best when that is larger."""
        names = [field.name for field in dataclasses.fields(self)]  # type: ignore[arg-type]
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise ConfigError(f"{unknown[0]!r} is not a decode setting of this run; its "
                              f"settings are {', '.join(names)}")
        chosen = {name: value for name, value in given.items() if value is not None}
        check_fields(type(self), chosen, "decode")
        if "beam" not in chosen and "n_best" in chosen:
            chosen["beam"] = max(getattr(self, "beam"), chosen["n_best"])  # noqa: B009
        return dataclasses.replace(self, **chosen)  # type: ignore[type-var]
