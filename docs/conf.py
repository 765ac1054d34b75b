"""The attnlab documentation site: Sphinx, the Furo theme, pages in Markdown (MyST).

`make docs` builds it into build/site; tests/docsite/test_site.py builds it with warnings as errors
(a broken link, a missing anchor or a docstring that does not parse fails `make test`). Nothing is
fetched: MathJax comes from the sphinx-mathjax-offline package and the theme uses system fonts.
"""

import importlib
import inspect
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # the API reference documents this checkout

from attnlab.version import __version__  # noqa: E402

project = "attnlab"
author = "the attnlab authors"
copyright = "the attnlab authors"  # noqa: A001 (Sphinx's name)
release = version = __version__

extensions = [
    "myst_nb",                   # the pages are Markdown (MyST), the tutorial a notebook
    "sphinx.ext.autodoc",        # the API reference, from the docstrings
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",    # MathJax 3 copied into the site: equations render offline
    "sphinxarg.ext",             # the CLI reference, from the argparse parsers
]

source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}  # myst-nb reads both as MyST
# The tutorial notebook is stored executed (tests/notebook/test_tutorial.py runs it): the site
# shows its stored outputs, the explorer's views included, and builds without a kernel.
nb_execution_mode = "off"
nb_output_stderr = "remove"
root_doc = "index"
exclude_patterns = ["_build", "results/*.md"]  # published reports: included by results.md
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
# undoc-members: every public name is listed, even one without a docstring yet
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}

html_theme = "furo"
html_title = f"attnlab {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
pygments_style = "friendly"


class PublicAPI(SphinxDirective):
    """`public-api: attnlab.attention`: the package's automodule, and an autodata for each name
    of its `__all__` that is plain data (such as `SCORES`): automodule leaves out data that a
    package imports from its modules, and the reference lists every public name."""

    required_arguments = 1
    option_spec = {"exclude-members": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        module = importlib.import_module(name)
        excluded = {member.strip() for member in
                    self.options.get("exclude-members", "").split(",") if member.strip()}
        lines = [f".. automodule:: {name}"]
        if excluded:
            lines.append(f"   :exclude-members: {', '.join(sorted(excluded))}")
        for member in getattr(module, "__all__", []):
            value = getattr(module, member)
            if member in excluded or inspect.isclass(value) or inspect.isroutine(value) \
                    or inspect.ismodule(value):
                continue
            lines += ["", f".. autodata:: {name}.{member}", "   :no-value:"]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=self.get_source_info()[0]),
                                self.content_offset, container)
        return container.children


def describe_data(app, what, name, obj, options, lines) -> None:
    """A table such as SCORES has no docstring of its own (Python would show dict's): list what
    it holds instead, so that its entry says which names it accepts."""
    if what != "data" or getattr(obj, "__doc__", None) != type(obj).__doc__:
        return
    if isinstance(obj, dict | list | tuple | set | frozenset):
        entries = ", ".join(f"`{key}`" for key in obj)
        lines[:] = [f"A `{type(obj).__name__}` of {len(obj)}: {entries}."]
    else:
        lines[:] = [f"A `{type(obj).__name__}`: `{obj!r}`."]


def literal_examples(app, what, name, obj, options, lines) -> None:
    """A package docstring shows its use as an indented block (code, as help() prints it);
    in reST an indented block is a quotation, so mark each one as literal code."""
    if what != "module":
        return
    marked: list[str] = []
    for line in lines:
        starts_block = line.startswith("    ") and marked and not marked[-1].strip() and \
            (len(marked) < 2 or not marked[-2].startswith("    "))
        if starts_block:
            marked += ["::", ""]
        marked.append(line)
    lines[:] = marked


def setup(app):
    app.add_directive("public-api", PublicAPI)
    app.connect("autodoc-process-docstring", describe_data)
    app.connect("autodoc-process-docstring", literal_examples)
    return {"parallel_read_safe": True}
