"""The hook that gives a result its views: a result class derives from Displayed and says how
it is viewed (`_view()`); Jupyter then draws it inline, `repr` prints its plain table, and it
exports. `view_of` and `show` take any result, a list of them, a {label: translation} dict
(side by side) or a suite's records."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .results import compare_view, suite_view
from .views import View, group, titled


class Displayed:
    """A result with views: subclasses define `_view()` -> View."""

    def _view(self) -> View:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self._view().text

    def _repr_html_(self) -> str:
        return self._view()._repr_html_()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return self._view()._repr_mimebundle_(include, exclude)

    def save_html(self, path: str | os.PathLike) -> Path:
        """The interactive view as a page of its own (nothing fetched)."""
        return self._view().save_html(path)

    def to_svg(self) -> str:
        """The figure the view's SVG download saves (needs attnlab[notebook])."""
        return self._view().to_svg()

    def save_png(self, path: str | os.PathLike, scale: float = 2.0) -> Path:
        """The same figure as PNG (needs attnlab[notebook])."""
        return self._view().save_png(path, scale)


def _is_record(value: Any) -> bool:
    return isinstance(value, Mapping) and "name" in value and "scores" in value


def view_of(value: Any) -> View:
    """The View of a result (or of a list of results, one under another; of {label:
    translation}, side by side; of a suite's records, their table and examples)."""
    if isinstance(value, View):
        return value
    if isinstance(value, Displayed) or callable(getattr(value, "_view", None)):
        return value._view()  # a result that says how it is viewed (an explanation too)
    if isinstance(value, list | tuple) and value and all(_is_record(v) for v in value):
        return suite_view(value)
    if isinstance(value, list | tuple) and value:
        return group([view_of(item) for item in value])
    if (
        isinstance(value, Mapping)
        and value
        and all(hasattr(v, "source_pieces") and hasattr(v, "attention")
                for v in value.values())
    ):
        return compare_view(value)
    if isinstance(value, Mapping) and value:
        return group([titled(view_of(item), str(label)) for label, item in value.items()])
    raise TypeError(
        f"nothing to show for {type(value).__name__}: attnlab.show takes a "
        "translation, caption, reading or explanation, a list or {label: result} of them "
        "(translations side by side) or a suite's records"
    )


def show(value: Any) -> None:
    """Draw `value`'s view inline in a notebook, or print its plain table elsewhere."""
    view = view_of(value)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(view)
    else:
        print(view.text)
