"""Fetching the RWTH gold alignments against a local HTTP server (the `serve` fixture of
conftest.py) that serves the shared copy or a changed one; no internet."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from attnlab.cli import main
from attnlab.data.download import sha256_of
from attnlab.data.rwth import DEFAULT_URL, FILES, PAIRS, SHA256, fetch_rwth_gold
from attnlab.errors import DataError
from attnlab.translation.alignment import RWTH_FILES, rwth_gold
from shared_data import missing

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_ROOT = Path(os.environ.get("ATTNLAB_DATA", REPO_ROOT.parent / "shared" / "data"))
RWTH = DATA_ROOT / "rwth-deen-gold"

needs_copy = pytest.mark.skipif(
    not all((RWTH / name).is_file() for name in FILES),
    reason=missing("rwth-deen-gold"),
)


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file in `directory` (hidden ones too) with its bytes."""
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def changed_copy(directory: Path, name: str) -> Path:
    """A copy of the gold set in `directory` with one byte added to file `name`."""
    directory.mkdir()
    for each in FILES:
        shutil.copyfile(RWTH / each, directory / each)
    (directory / name).write_bytes((RWTH / name).read_bytes() + b" ")
    return directory


def test_what_is_fetched():
    assert FILES == RWTH_FILES == tuple(SHA256)  # what alignment.rwth_gold reads
    assert DEFAULT_URL.startswith("https://raw.githubusercontent.com/lisasiyu/Cross-Align/")


@needs_copy
def test_download_then_cache(serve, tmp_path):
    url, requests = serve(RWTH)
    lines = []
    paths = fetch_rwth_gold(tmp_path / "gold", base_url=url, progress=lines.append)
    assert sorted(requests) == ["/deen.talp", "/test.de-en"]
    assert paths == {name: tmp_path / "gold" / name for name in FILES}
    assert snapshot(tmp_path / "gold") == {name: (RWTH / name).read_bytes() for name in FILES}
    assert len(lines) == 2 and all("downloaded" in line for line in lines)
    assert len(rwth_gold(tmp_path / "gold").sources) == PAIRS

    requests.clear()
    lines.clear()
    fetch_rwth_gold(tmp_path / "gold", base_url=url, progress=lines.append)
    assert requests == [] and all("cached" in line for line in lines)


@needs_copy
def test_a_checksum_mismatch_writes_nothing(serve, tmp_path):
    """deen.talp changed upstream: refused in one sentence, and the good test.de-en that came
    first is not written either; a folder holding a damaged copy keeps it as it was."""
    url, _ = serve(changed_copy(tmp_path / "served", "deen.talp"))
    dest = tmp_path / "dest"
    with pytest.raises(DataError) as error:
        fetch_rwth_gold(dest, base_url=url, progress=None)
    message = str(error.value)
    assert "deen.talp" in message and SHA256["deen.talp"] in message
    assert sha256_of(tmp_path / "served" / "deen.talp") in message
    assert message.count(". ") == 0 and "\n" not in message and "nothing was written" in message
    assert not dest.exists()

    dest.mkdir()
    (dest / "deen.talp").write_bytes(b"damaged")
    with pytest.raises(DataError, match="nothing was written"):
        fetch_rwth_gold(dest, base_url=url, progress=None)
    assert snapshot(dest) == {"deen.talp": b"damaged"}


def test_a_wrong_file_is_refused_without_a_local_copy(serve, tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    for name in FILES:
        (served / name).write_text("not the gold set\n", encoding="utf-8")
    url, _ = serve(served)
    with pytest.raises(DataError, match=r"test\.de-en .*has SHA-256 .*expected "
                                        + SHA256["test.de-en"]):
        fetch_rwth_gold(tmp_path / "dest", base_url=url, progress=None)
    assert not (tmp_path / "dest").exists()


def test_404_suggests_from(serve, tmp_path):
    url, _ = serve(tmp_path / "empty")  # a missing directory: every request is a 404
    with pytest.raises(DataError, match=r"test\.de-en: HTTP 404.*--from DIR.*RWTH"):
        fetch_rwth_gold(tmp_path / "dest", base_url=url, progress=None)


@needs_copy
def test_from_local_copy_and_a_bad_one(tmp_path):
    fetch_rwth_gold(tmp_path / "gold", from_dir=RWTH, progress=None)
    assert snapshot(tmp_path / "gold") == {name: (RWTH / name).read_bytes() for name in FILES}
    bad = changed_copy(tmp_path / "bad", "test.de-en")
    with pytest.raises(DataError, match=r"--from .*bad: test\.de-en has SHA-256"):
        fetch_rwth_gold(tmp_path / "other", from_dir=bad, progress=None)
    assert not (tmp_path / "other").exists()


@needs_copy
def test_cli(serve, tmp_path, capsys):
    url, _ = serve(RWTH)
    assert main(["data", "rwth-gold", "--dest", str(tmp_path / "gold"), "--base-url", url]) == 0
    out = capsys.readouterr().out
    assert out.count("downloaded") == 2 and f"--rwth {tmp_path / 'gold'}" in out
    url, _ = serve(changed_copy(tmp_path / "served", "deen.talp"))
    assert main(["data", "rwth-gold", "--dest", str(tmp_path / "new"), "--base-url", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SHA-256" in err and not (tmp_path / "new").exists()
