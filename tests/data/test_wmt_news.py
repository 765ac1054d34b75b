"""`attnlab data wmt-news`: the WMT news test sets from a local copy or a (local) server, checked
by the digest of their text, and the training split written from them."""

import gzip
import os
import shutil
from pathlib import Path

import pytest

from attnlab.cli import main
from attnlab.data import wmt_news
from attnlab.data.corpus import read_parallel
from attnlab.errors import DataError
from shared_data import missing

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_ROOT = Path(os.environ.get("ATTNLAB_DATA", REPO_ROOT.parent / "shared" / "data"))
COPY = DATA_ROOT / "wmt-news-deen"
needs_copy = pytest.mark.skipif(
    not (COPY / "newstest2018.en.gz").is_file(),
    reason=missing("wmt-news-deen"),
)
NAMES = [f"{name}.gz" for name in wmt_news.TEXT_SHA256]


@pytest.fixture(scope="module")
def fetched(tmp_path_factory):
    dest = tmp_path_factory.mktemp("wmt") / "news"
    split = wmt_news.fetch_wmt_news(dest, from_dir=COPY, progress=None)
    return dest, split


@needs_copy
@pytest.mark.slow  # reads and writes every set whole (about 40,000 pairs)
def test_the_local_copy_gives_every_set_and_a_training_split(fetched):
    dest, split = fetched
    assert all(wmt_news.text_sha256(dest / name) == wmt_news.TEXT_SHA256[name[:-3]]
               for name in NAMES)
    train = read_parallel(dest / "train.de.gz", dest / "train.en.gz")
    assert len(train) == split.kept
    assert split.read == split.kept + split.repeated + split.held_out
    # every set but validation and test went in
    expected = sum(len(read_parallel(dest / f"{name}.de.gz", dest / f"{name}.en.gz"))
                   for name in wmt_news.SETS if name not in (wmt_news.VALID, wmt_news.TEST))
    assert split.read == expected
    # no repeated pair, and no side of the validation or test set, in the training split
    keys = {(source.strip(), target.strip()) for source, target in train}
    assert len(keys) == len(train)
    held = {side.strip() for name in (wmt_news.VALID, wmt_news.TEST)
            for pair in read_parallel(dest / f"{name}.de.gz", dest / f"{name}.en.gz")
            for side in pair} - {""}
    assert not any(source.strip() in held or target.strip() in held for source, target in train)


@needs_copy
@pytest.mark.slow  # reads and writes every set whole (about 40,000 pairs)
def test_a_second_fetch_keeps_the_files(fetched, capsys):
    dest, split = fetched
    before = {name: (dest / name).stat().st_mtime_ns for name in NAMES}
    assert wmt_news.fetch_wmt_news(dest, from_dir=COPY) == split
    assert {name: (dest / name).stat().st_mtime_ns for name in NAMES} == before
    assert "0 files copied" in capsys.readouterr().out


def _small_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(COPY, copy)
    return copy


@needs_copy
def test_a_changed_file_in_the_local_copy_changes_nothing(tmp_path):
    copy = _small_copy(tmp_path)
    with gzip.open(copy / "newstest2012.en.gz", "ab") as stream:
        stream.write(b"one more line\n")
    dest = tmp_path / "dest"
    with pytest.raises(DataError, match=r"--from .*copy: newstest2012\.en\.gz not the known WMT"):
        wmt_news.fetch_wmt_news(dest, from_dir=copy, progress=None)
    assert not dest.exists()


@needs_copy
def test_a_missing_file_is_named(tmp_path):
    copy = _small_copy(tmp_path)
    (copy / "newssyscomb2009.de.gz").unlink()
    with pytest.raises(DataError, match=r"missing newssyscomb2009\.de\.gz"):
        wmt_news.fetch_wmt_news(tmp_path / "dest", from_dir=copy, progress=None)


@needs_copy
@pytest.mark.slow  # reads and writes every set whole (about 40,000 pairs)
def test_download_gzips_the_text_files_and_checks_their_digest(tmp_path, serve):
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    for name in NAMES:  # the repository's layout: {set}.deu / {set}.eng, plain text
        stem, language = name[:-3].rsplit(".", 1)
        with gzip.open(COPY / name, "rb") as text:
            (upstream / f"{stem}.{wmt_news.UPSTREAM[language]}").write_bytes(text.read())
    url, requests = serve(upstream)
    dest = tmp_path / "dest"
    split = wmt_news.fetch_wmt_news(dest, base_url=url, progress=None)
    assert len(requests) == len(NAMES)
    assert all(wmt_news.text_sha256(dest / name) == wmt_news.TEXT_SHA256[name[:-3]]
               for name in NAMES)
    assert not (dest / ".download").exists()
    assert split.kept == len(read_parallel(dest / "train.de.gz", dest / "train.en.gz"))
    # a server whose file differs: refused, naming the file, and the good files stay
    (upstream / "newstest2013.eng").write_text("not the news\n", encoding="utf-8")
    (dest / "newstest2013.en.gz").unlink()
    with pytest.raises(DataError, match=r"newstest2013\.eng .* has SHA-256"):
        wmt_news.fetch_wmt_news(dest, base_url=url, progress=None)
    assert not (dest / "newstest2013.en.gz").exists()
    assert (dest / "newstest2013.de.gz").is_file()


def test_the_command_names_a_missing_local_copy(tmp_path, capsys):
    assert main(["data", "wmt-news", "--dest", str(tmp_path / "d"),
                 "--from", str(tmp_path / "nowhere")]) != 0
    assert "--from" in capsys.readouterr().err


def test_a_file_given_to_from_is_named_as_a_file(tmp_path, capsys):
    copy = tmp_path / "copy"
    copy.mkdir()
    packed = copy / "newstest2017.de.gz"
    packed.write_bytes(b"")
    assert main(["data", "wmt-news", "--dest", str(tmp_path / "d"), "--from", str(packed)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such directory" not in err
    assert f"--from {packed} is a file, and --from wants the folder that holds the 24" in err
    assert f"--from {copy})" in err
    assert not (tmp_path / "d").exists()
