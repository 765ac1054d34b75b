"""The wheel carries what attnlab reads at run time (the shipped configs and suites, the
explorer's static files) and works installed on its own, from any directory; requirements.lock
is exactly the set attnlab[dev] needs, as installed here, within pyproject.toml's ranges."""

import email
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import attnlab
from attnlab.compare import load_suite

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "attnlab"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# The files the wheel must carry: every file of the package that is not Python (configs,
# suites, the page, the notebook views' JavaScript): attnlab finds them beside its modules.
DATA = sorted(path.relative_to(PACKAGE.parent).as_posix() for path in PACKAGE.rglob("*")
              if path.is_file() and path.suffix not in (".py", ".pyc")
              and "__pycache__" not in path.parts)


def quiet_env() -> dict:
    """This environment without PYTHONPATH (so nothing of the checkout leaks in), offline."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return {**env, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "OMP_NUM_THREADS": "1"}


def run(command, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                            env=quiet_env(), timeout=180, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, command))}:\n{result.stdout}{result.stderr}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of this checkout (building writes build/ and egg-info beside the
    sources: not into the tree), with the venv's setuptools: no network."""
    source = tmp_path_factory.mktemp("source")
    shutil.copytree(ROOT / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", dist, source])
    (built,) = dist.glob("attnlab-*.whl")
    return built


@pytest.fixture(scope="module")
def fresh(wheel, tmp_path_factory) -> Path:
    """A new venv with the wheel installed and nothing else; the dependencies come from this
    venv's site-packages through a .pth file (a path, so its .pth files, the editable attnlab
    among them, are not read)."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    here = run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    there = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    Path(there.stdout.strip(), "dependencies.pth").write_text(here.stdout.strip() + "\n")
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
         wheel])
    return venv


@pytest.mark.slow
def test_the_wheel_carries_the_configs_suites_and_static_files(wheel):
    assert any(name.startswith("attnlab/configs/compare/") for name in DATA)
    assert "attnlab/serve/static/index.html" in DATA
    assert "attnlab/viz/notebook/shim.js" in DATA
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (info,) = {name.split("/")[0] for name in names if ".dist-info/" in name}
        meta = email.message_from_string(archive.read(f"{info}/METADATA").decode())
    missing = [name for name in DATA if name not in names]
    assert not missing, f"not in the wheel: {missing}"
    assert not [name for name in names if name.startswith(("tests/", "benchmarks/"))]
    assert f"{info}/licenses/LICENSE" in names
    assert meta["Version"] == attnlab.__version__
    assert meta["License-Expression"] == "MIT"
    assert meta["Requires-Python"] == ">=3.11"
    assert "torch>=2.13" in meta.get_all("Requires-Dist")
    assert {url.split(",")[0] for url in meta.get_all("Project-URL")} == {
        "Homepage", "Documentation", "Issues", "Changelog"}


@pytest.mark.slow
def test_the_installed_wheel_shows_a_config_from_any_directory(fresh, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shown = run([fresh / "bin" / "attnlab", "config", "show", "multi30k-bahdanau"],
                cwd=elsewhere)
    assert shown.stdout == (PACKAGE / "configs" / "multi30k-bahdanau.yaml").read_text("utf-8")
    # attnlab is the wheel's, not the checkout's; a shipped suite names its members' configs by
    # paths relative to itself: they are there too.
    found = run([fresh / "bin" / "python", "-c", "import attnlab; print(attnlab.__file__); "
                 "from attnlab.compare import load_suite; "
                 "print(*[m.config for m in load_suite('mechanisms').members], sep='\\n')"],
                cwd=elsewhere)
    paths = [Path(line) for line in found.stdout.splitlines()]
    members = len(load_suite("mechanisms").members)   # the checkout's suite: the same file
    assert len(paths) == 1 + members and all(path.is_relative_to(fresh) for path in paths)
    assert all(path.is_file() for path in paths)


@pytest.mark.slow
def test_the_installed_wheel_says_its_version(fresh, tmp_path):
    result = run([fresh / "bin" / "attnlab", "--version"], cwd=tmp_path)
    assert result.stdout.strip() == f"attnlab {attnlab.__version__}"


def locked() -> dict[str, str]:
    lines = (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines()
    pins = [line.split("==") for line in lines if line and not line.startswith("#")]
    return {canonicalize_name(name): version for name, version in pins}


def test_the_lock_is_this_venvs_set_of_what_attnlab_dev_needs():
    # Every package the requirements pull in, at its installed version, and nothing else.
    result = subprocess.run([sys.executable, ROOT / "tools" / "lock.py", "--check"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert {"torch", "setuptools", "pytest", "import-linter"} <= set(locked())
    assert not [version for version in locked().values() if "+" in version]  # not on PyPI


def test_the_lock_is_within_pyprojects_ranges():
    project = PYPROJECT["project"]
    pins = locked()
    for text in project["dependencies"] + project["optional-dependencies"]["dev"]:
        requirement = Requirement(text)
        version = pins[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(version, prereleases=True), (text, version)


def test_make_installs_the_locked_torch_first():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.findall(r"install --quiet (torch==\S+)", makefile) == [f"torch=={locked()['torch']}"]
    assert "-r requirements.lock" in makefile and "--no-deps -e '.[dev]'" in makefile
