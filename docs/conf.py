"""The attnlab documentation site: Sphinx, the Furo theme, pages in Markdown (MyST).

`make docs` builds it into build/site; tests/docsite/test_site.py builds it with warnings as errors
(a broken link, a missing anchor or a docstring that does not parse fails `make test`). Nothing is
fetched: MathJax comes from the sphinx-mathjax-offline package and the theme uses system fonts.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # the API reference documents this checkout

from attnlab.version import __version__  # noqa: E402

project = "attnlab"
author = "the attnlab authors"
copyright = "the attnlab authors"  # noqa: A001 (Sphinx's name)
release = version = __version__

extensions = [
    "myst_parser",               # the pages are Markdown
    "sphinx.ext.autodoc",        # the API reference, from the docstrings
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",    # MathJax 3 copied into the site: equations render offline
    "sphinxarg.ext",             # the CLI reference, from the argparse parsers
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3        # [text](page.md#a-heading) links are checked like pages
myst_dmath_double_inline = True

# Docstrings are written with Markdown's `code` spans; in reST a single backquote is the
# default role, so make that role literal code instead of a citation.
default_role = "literal"
smartquotes = False             # `--resume` stays two hyphens, not a dash

autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False   # torch.nn.Module's docstrings are not ours to render
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}

html_theme = "furo"
html_title = f"attnlab {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
pygments_style = "friendly"
