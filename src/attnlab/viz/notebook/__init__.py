"""The explorer's views in a notebook: every translation (one or n-best), caption, LSTMN
reading and suite of results draws inline as `attnlab serve` draws it (hover or focus a token,
its weights light up), from the page's own code (serve/static, inlined: no request leaves
the notebook), and exports.

    result = attnlab.load("runs/dates").translate(["3 March 1999"], n_best=3)[0]
    result                         # in Jupyter: the interactive view; in a console: a table
    result.save_html("view.html"); result.to_svg(); result.save_png("view.png")
    result.weights                 # the attention it shows, (target, source) numpy
    attnlab.show({"dot": a, "general": b})      # side by side
    run.explain("3 March 1999")    # attention, with a switch to each attribution of it

to_svg and save_png run the page's figure code in V8 (`pip install 'attnlab[notebook]'`:
mini-racer and resvg-py); the interactive view needs neither.
"""

from .display import Displayed, show, view_of
from .results import (
    caption_view,
    compare_view,
    explanation_view,
    reading_view,
    suite_view,
    translation_view,
)
from .views import View

__all__ = [
    "Displayed",
    "View",
    "caption_view",
    "compare_view",
    "explanation_view",
    "reading_view",
    "show",
    "suite_view",
    "translation_view",
    "view_of",
]
