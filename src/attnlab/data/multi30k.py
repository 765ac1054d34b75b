"""Download (or copy from a local copy) the Multi30k task-1 raw files, checked by SHA-256.

Multi30k (Elliott et al. 2016): image descriptions, English originals with German, French and
Czech translations; line i of every language file of a split is the same description. Files are
`{split}.{language}.gz` (gzip, UTF-8, one untokenised cased sentence a line) from the public
multi30k/dataset repository, `data/task1/raw/`:

    split             lines    languages
    train             29,000   cs de en fr
    val                1,014   cs de en fr
    test_2016_flickr   1,000   cs de en fr

`fetch_multi30k` puts the six files of one language pair in a directory and returns their paths.
Every file is checked against `SHA256`, so a changed upstream file or a damaged download is an
error, never silently different data.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from attnlab.errors import ConfigError, DataError
from attnlab.files import writing

DEFAULT_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"
SPLITS = ("train", "val", "test_2016_flickr")
LANGUAGES = ("cs", "de", "en", "fr")
TIMEOUT_S = 60  # per network operation, not per file: a slow but live server still finishes

# SHA-256 of the public files (multi30k/dataset master, data/task1/raw), computed once from a copy.
SHA256 = {
    "train.cs.gz": "a65adb8b32e3bc664f21ecba7a6e7f6950fd1f405e135f7c312faabdb6255077",
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "train.fr.gz": "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c",
    "val.cs.gz": "b63226e05c4bd5dd6a42897d74b86a1b9d2c31498252c572b1ea7f7996927fcc",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "val.fr.gz": "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9",
    "test_2016_flickr.cs.gz": "200a4a74cc9560f051924abb9803be008d1908d77f747e9141aeb86dfd2797f1",
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
    "test_2016_flickr.fr.gz": "6d326e188d259fb1d04ac19eae3af956559b3a0b93d7635e56c90987c40c8b90",
}

# What can go wrong on the wire; local disk errors are not in here and keep their traceback.
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError)


def file_name(split: str, language: str) -> str:
    return f"{split}.{language}.gz"


def check_pair(pair: Iterable[str]) -> tuple[str, str]:
    """Validate a (source, target) language pair such as ("de", "en")."""
    pair = tuple(pair)
    text = "-".join(pair)
    unknown = [language for language in pair if language not in LANGUAGES]
    if len(pair) != 2 or unknown or pair[0] == pair[1]:
        raise ConfigError(
            f"bad language pair {text!r}: give two different languages of "
            f"{', '.join(LANGUAGES)} joined by '-', e.g. de-en"
        )
    return pair[0], pair[1]


def parse_pair(text: str) -> tuple[str, str]:
    """'de-en' -> ('de', 'en'), as `--pair` takes it."""
    return check_pair(text.strip().lower().split("-"))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_multi30k(
    dest: str | os.PathLike,
    *,
    pair: Iterable[str] = ("de", "en"),
    base_url: str = DEFAULT_URL,
    from_dir: str | os.PathLike | None = None,
    progress: Callable[[str], None] | None = print,
) -> dict[tuple[str, str], Path]:
    """Put the six files of `pair` (3 splits x 2 languages) in `dest`; return
    {(split, language): path}.

    A file already in `dest` with the right digest is kept (cache); a wrong one is replaced.
    Missing files are downloaded from `{base_url}/{split}.{language}.gz`, or, with `from_dir`,
    copied from a local copy, which is first checked whole (every file present, every digest
    right) so a bad copy changes nothing. `from_dir` may be `dest` itself: the files are then
    used in place. `progress` gets one line per file (None: silent).
    Raises DataError for a failed download, a digest mismatch or an incomplete local copy.
    """
    pair = check_pair(pair)
    names = [file_name(split, language) for split in SPLITS for language in pair]
    if from_dir is not None:
        _check_local_copy(Path(from_dir), names)
    dest = Path(dest)
    paths = {}
    with writing(dest):  # a full disk or a read-only folder: one sentence naming dest
        dest.mkdir(parents=True, exist_ok=True)
        for split in SPLITS:
            for language in pair:
                name = file_name(split, language)
                paths[split, language] = dest / name
                line = _fetch_one(name, dest / name, base_url, from_dir)
                if progress is not None:
                    progress(line)
    return paths


def _fetch_one(name: str, path: Path, base_url: str, from_dir: str | os.PathLike | None) -> str:
    """Make `path` a good copy of `name`; return the progress line saying how."""
    cached = path.is_file()
    if cached and sha256_of(path) == SHA256[name]:
        return f"{name}: cached in {path.parent}"
    if from_dir is not None:
        with _replacing(path) as out, open(Path(from_dir) / name, "rb") as stream:
            shutil.copyfileobj(stream, out)
        return f"{name}: copied from {from_dir}"
    with _replacing(path) as out:
        size = _download(f"{base_url.rstrip('/')}/{name}", name, out)
    again = " again (the cached copy was damaged)" if cached else ""
    return f"{name}: downloaded{again}, {size:,} bytes"


def _check_local_copy(directory: Path, names: list[str]) -> None:
    if not directory.is_dir():
        raise DataError(f"--from {directory}: no such directory")
    missing = [name for name in names if not (directory / name).is_file()]
    if missing:
        raise DataError(f"--from {directory}: missing {', '.join(missing)}")
    for name in names:
        actual = sha256_of(directory / name)
        if actual != SHA256[name]:
            raise DataError(
                f"--from {directory}: {name} has SHA-256 {actual}, expected {SHA256[name]}"
            )


@contextmanager
def _replacing(path: Path) -> Iterator[BinaryIO]:
    """A temporary file beside `path`, renamed onto it only if the block succeeds, so an
    interrupted or failed fetch never leaves a half file under the real name."""
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        os.replace(temp_name, path)
    finally:
        Path(temp_name).unlink(missing_ok=True)  # nothing left to remove after the rename


def _download(url: str, name: str, out: BinaryIO) -> int:
    """Stream `url` into `out`, hashing as it goes; raise DataError on failure or bad digest."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            while chunk := response.read(1 << 16):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as error:
        raise DataError(
            f"could not download {url}: HTTP {error.code} {error.reason}; check --base-url, "
            f"or use --from DIR with a local copy of the Multi30k files"
        ) from None
    except _NETWORK_ERRORS as error:
        reason = getattr(error, "reason", None) or error
        raise DataError(
            f"could not download {url} ({reason}); without network access, "
            f"use --from DIR with a local copy of the Multi30k files"
        ) from None
    actual = digest.hexdigest()
    if actual != SHA256[name]:
        raise DataError(
            f"downloaded {name} from {url} has SHA-256 {actual}, expected {SHA256[name]}; "
            f"the server's file is not the known Multi30k release"
        )
    return out.tell()
