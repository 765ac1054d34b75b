"""The explorer page's own ES modules and CSS (attnlab/serve/static), inlined for a notebook.

`bundle()` joins notebook.js and the modules it imports into one classic script, each module
in a function of its own (its imports read from the modules before it, its exports returned),
so one output works wherever scripts run, with no request and no module loader. The modules
keep to the forms this reads: `import { a, b } from "./x.js";` and `export function|class|
const|let NAME`; any other import or export is refused, so a new form fails loudly here.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path

# The page's files, found beside this package (not imported: serve sits above viz).
STATIC = Path(__file__).resolve().parents[2] / "serve" / "static"
ENTRY = "notebook.js"

IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([\w-]+\.js)";[ \t]*$', re.M)
EXPORT = re.compile(r"^export\s+(?:async\s+)?(?:function\*?|class|const|let)\s+([\w$]+)", re.M)
OTHER = re.compile(r"^\s*(?:import|export)\b(?!\s*\()", re.M)


def _names(listed: str) -> str:
    """`a, b as c` -> `a, b: c` (an import list as a destructuring pattern)."""
    parts = [part.split() for part in listed.replace("\n", " ").split(",") if part.strip()]
    return ", ".join(p[0] if len(p) == 1 else f"{p[0]}: {p[2]}" for p in parts)


def _module(name: str, source: str) -> tuple[list[str], str]:
    """The modules `name` imports, and its code as a function body returning its exports."""
    imports = [found.group(2) for found in IMPORT.finditer(source)]
    body = IMPORT.sub(
        lambda m: f'const {{ {_names(m.group(1))} }} = modules["{m.group(2)}"];', source
    )
    exports = EXPORT.findall(body)
    body = re.sub(r"^export\s+", "", body, flags=re.M)
    if stray := OTHER.search(body):
        line = body[: stray.start()].count("\n") + 1
        raise ValueError(
            f"{name}:{line}: an import or export form the notebook bundle does not read"
        )
    return imports, f"{body}\nreturn {{ {', '.join(exports)} }};"


@functools.cache
def bundle() -> str:
    """notebook.js and its imports as one script that sets window[GLOBAL] to its exports."""
    order: list[str] = []
    bodies: dict[str, str] = {}

    def visit(name: str, path: tuple[str, ...] = ()) -> None:
        if name in path:
            raise ValueError(f"an import cycle: {' -> '.join((*path, name))}")
        if name in bodies:
            return
        imports, bodies[name] = _module(name, (STATIC / name).read_text(encoding="utf-8"))
        for imported in imports:
            visit(imported, (*path, name))
        order.append(name)

    visit(ENTRY)
    parts = [f'modules["{name}"] = (() => {{\n{bodies[name]}\n}})();' for name in order]
    return (
        "(() => {\nconst modules = {};\n"
        + "\n".join(parts)
        + f'\nwindow[{json.dumps(GLOBAL)}] = modules["{ENTRY}"];\n}})();\n'
    )


@functools.cache
def css() -> str:
    """style.css for a view's shadow root (its :root rules on the host), then notebook.css."""
    page = (STATIC / "style.css").read_text(encoding="utf-8").replace(":root", ":host")
    return page + "\n" + (STATIC / "notebook.css").read_text(encoding="utf-8")


def _version() -> str:
    digest = hashlib.sha256()
    for path in sorted(STATIC.glob("*.js")) + sorted(STATIC.glob("*.css")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


# The bundle's global, one per version of the page's code: several outputs of one version
# define it once; an output made by another version brings (and uses) its own.
GLOBAL = f"attnlabViews_{_version()}"
