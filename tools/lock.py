"""Write requirements.lock from this venv: every package that attnlab and its dev extra need
(pyproject.toml's requirements, followed through the installed packages' metadata as `pip check`
does) at its installed version, as `pip freeze` spells it; the file's comment lines are kept.

    .venv/bin/python tools/lock.py            # rewrite requirements.lock (`make lock`)
    .venv/bin/python tools/lock.py --check    # exit 1, naming the differences, if it is stale

Left out, as they are not needed: packages installed by hand, the aligner extra (eflomal,
compiled with gcc), attnlab itself and pip. A local version tag is dropped (torch 2.13.0+cpu is
locked as torch==2.13.0, which PyPI has and which that CPU wheel matches all the same).
"""

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"


def needed(requirements: list[str]) -> set[str]:
    """The canonical names of every distribution these requirements pull in, read from the
    installed metadata (a missing one raises PackageNotFoundError)."""
    found, todo = set(), [Requirement(text) for text in requirements]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        for extra in ("", *sorted(requirement.extras)):
            if (name, extra) in found:
                continue
            found.add((name, extra))
            for text in metadata.requires(name) or []:
                dependency = Requirement(text)
                if dependency.marker is None or dependency.marker.evaluate({"extra": extra}):
                    todo.append(dependency)
    return {name for name, _ in found}


def lock_lines() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = needed(project["dependencies"] + project["optional-dependencies"]["dev"])
    frozen = subprocess.run([sys.executable, "-m", "pip", "freeze", "--all", "--exclude-editable"],
                            capture_output=True, text=True, check=True).stdout.splitlines()
    pins = [line.split("+")[0] for line in frozen
            if "==" in line and canonicalize_name(line.split("==")[0]) in names]
    missing = names - {canonicalize_name(pin.split("==")[0]) for pin in pins}
    if missing:
        raise SystemExit(f"tools/lock.py: not pinned by pip freeze: {', '.join(sorted(missing))}")
    return pins


def main(argv: list[str]) -> int:
    header = [line for line in LOCK.read_text(encoding="utf-8").splitlines()
              if line.startswith("#")]
    pins = lock_lines()
    if "--check" in argv:
        old = [line for line in LOCK.read_text(encoding="utf-8").splitlines()
               if line and not line.startswith("#")]
        if old != pins:
            gone, new = sorted(set(old) - set(pins)), sorted(set(pins) - set(old))
            print(f"requirements.lock is not this venv's set (make lock): only in the file: "
                  f"{gone or 'nothing'}; only in the venv: {new or 'nothing'}", file=sys.stderr)
            return 1
        return 0
    LOCK.write_text("\n".join(header + pins) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
