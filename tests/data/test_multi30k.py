"""Multi30k fetching against a local HTTP server that serves the shared copy; no internet."""

from __future__ import annotations

import gzip
import os
import shutil
import socket
from pathlib import Path

import pytest

from attnlab.cli import main
from attnlab.data.multi30k import SHA256, SPLITS, fetch_multi30k, parse_pair, sha256_of
from attnlab.errors import ConfigError, DataError
from shared_data import missing

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_ROOT = Path(os.environ.get("ATTNLAB_DATA", REPO_ROOT.parent / "shared" / "data"))
MULTI30K = DATA_ROOT / "multi30k"
PAIR_FILES = [f"{split}.{lang}.gz" for split in SPLITS for lang in ("de", "en")]

needs_copy = pytest.mark.skipif(
    not all((MULTI30K / name).is_file() for name in SHA256),
    reason=missing("multi30k"),
)


@needs_copy
def test_download_then_cache(serve, tmp_path):
    url, requests = serve(MULTI30K)
    lines = []
    paths = fetch_multi30k(tmp_path, pair=("de", "en"), base_url=url, progress=lines.append)
    assert sorted(requests) == sorted(f"/{name}" for name in PAIR_FILES)
    assert sorted(p.name for p in paths.values()) == sorted(PAIR_FILES)
    assert paths["train", "de"] == tmp_path / "train.de.gz"
    assert all(sha256_of(path) == SHA256[path.name] for path in paths.values())
    assert len(lines) == 6 and all("downloaded" in line for line in lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(PAIR_FILES)  # no .part left
    with gzip.open(paths["val", "en"], "rt", encoding="utf-8") as stream:
        assert sum(1 for _ in stream) == 1014

    requests.clear()
    lines.clear()
    fetch_multi30k(tmp_path, pair=("de", "en"), base_url=url, progress=lines.append)
    assert requests == []
    assert all("cached" in line for line in lines)


@needs_copy
def test_damaged_cache_is_downloaded_again(serve, tmp_path):
    url, requests = serve(MULTI30K)
    fetch_multi30k(tmp_path, base_url=url, progress=None)
    (tmp_path / "val.de.gz").write_bytes(b"not the file")
    requests.clear()
    fetch_multi30k(tmp_path, base_url=url, progress=None)
    assert requests == ["/val.de.gz"]
    assert sha256_of(tmp_path / "val.de.gz") == SHA256["val.de.gz"]


@needs_copy
def test_wrong_content_is_a_checksum_error(serve, tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    for name in PAIR_FILES:
        shutil.copyfile(MULTI30K / name, served / name)
    (served / "train.en.gz").write_bytes(b"changed upstream")
    url, _ = serve(served)
    dest = tmp_path / "dest"
    with pytest.raises(DataError) as error:
        fetch_multi30k(dest, base_url=url, progress=None)
    message = str(error.value)
    assert "train.en.gz" in message and SHA256["train.en.gz"] in message
    assert sha256_of(served / "train.en.gz") in message
    assert not (dest / "train.en.gz").exists()
    assert not list(dest.glob("*.part"))


def test_404_names_the_url(serve, tmp_path):
    url, _ = serve(tmp_path / "empty")  # a missing directory: every request is a 404
    with pytest.raises(DataError, match=r"train\.de\.gz: HTTP 404.*--from DIR"):
        fetch_multi30k(tmp_path / "dest", base_url=url, progress=None)


def test_unreachable_server_suggests_from(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DataError, match=rf"127\.0\.0\.1:{port}/train\.de\.gz.*--from DIR"):
        fetch_multi30k(tmp_path, base_url=f"http://127.0.0.1:{port}", progress=None)


@needs_copy
def test_from_local_copy(tmp_path):
    paths = fetch_multi30k(tmp_path, pair=("en", "fr"), from_dir=MULTI30K, progress=None)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{split}.{lang}.gz" for split in SPLITS for lang in ("en", "fr")
    )
    assert all(sha256_of(path) == SHA256[path.name] for path in paths.values())


@needs_copy
def test_from_incomplete_or_bad_copy_changes_nothing(tmp_path):
    partial = tmp_path / "partial"
    partial.mkdir()
    shutil.copyfile(MULTI30K / "train.de.gz", partial / "train.de.gz")
    with pytest.raises(DataError, match=r"--from .*partial: missing train\.en\.gz"):
        fetch_multi30k(tmp_path / "dest", from_dir=partial, progress=None)
    for name in PAIR_FILES:
        shutil.copyfile(MULTI30K / name, partial / name)
    (partial / "val.en.gz").write_bytes(b"bad")
    with pytest.raises(DataError, match=r"val\.en\.gz has SHA-256"):
        fetch_multi30k(tmp_path / "dest", from_dir=partial, progress=None)
    assert not (tmp_path / "dest").exists()


@pytest.mark.parametrize("text", ["de-xx", "de", "en-en", "de-en-fr", ""])
def test_bad_pair(text):
    with pytest.raises(ConfigError, match="cs, de, en, fr"):
        parse_pair(text)


def test_pair_parsing():
    assert parse_pair("DE-en") == ("de", "en")


@needs_copy
def test_cli_from(tmp_path, capsys):
    assert main(["data", "multi30k", "--dest", str(tmp_path), "--from", str(MULTI30K)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(PAIR_FILES)
    out = capsys.readouterr().out
    assert out.count("copied from") == 6 and "de-en" in out


def test_cli_bad_pair_is_one_line(tmp_path, capsys):
    assert main(["data", "multi30k", "--dest", str(tmp_path), "--pair", "de-jp"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'de-jp'" in err and "cs, de, en, fr" in err
