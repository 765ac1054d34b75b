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
error, never silently different data (attnlab.data.download does the fetching).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from attnlab.errors import ConfigError

from .download import fetch_files, sha256_of

__all__ = ["DEFAULT_URL", "LANGUAGES", "SHA256", "SPLITS", "check_pair", "fetch_multi30k",
           "file_name", "parse_pair", "sha256_of"]

DEFAULT_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"
SPLITS = ("train", "val", "test_2016_flickr")
LANGUAGES = ("cs", "de", "en", "fr")

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
    Raises DataError for a failed download, a digest mismatch or an incomplete local copy; nothing
    in `dest` changes then (see attnlab.data.download).
    """
    pair = check_pair(pair)
    names = {(split, language): file_name(split, language) for split in SPLITS
             for language in pair}
    paths = fetch_files(dest, {name: SHA256[name] for name in names.values()},
                        base_url=base_url, from_dir=from_dir, dataset="Multi30k",
                        progress=progress)
    return {key: paths[name] for key, name in names.items()}
