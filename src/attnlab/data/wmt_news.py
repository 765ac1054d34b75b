"""Download (or copy from a local copy) the WMT news test sets 2008-2018, German-English, checked
by SHA-256, and make a training split of them.

The news test sets of the WMT shared tasks (news-test2008, newssyscomb2009, newstest2009 ...
newstest2018: 32,746 sentence-aligned pairs) are news text, the nearest domain to the RWTH
Europarl gold alignments (Vilar et al. 2006) that can be had in quantity without Europarl itself.
They are fetched as the public Helsinki-NLP/OPUS-MT-testsets repository holds them
(`testsets/deu-eng/{set}.deu` and `.eng`, at a pinned commit; first published by the WMT
organisers at statmt.org) and kept as `{set}.de.gz` / `{set}.en.gz`, the layout of a local copy.

Files are identified by the SHA-256 of their text (after gunzip), so a download gzipped here and
a local copy gzipped elsewhere are the same files. `fetch_wmt_news` then writes the training
split `train.de.gz` / `train.en.gz`: every set but newstest2017 (validation) and newstest2018
(test), without repeated pairs and without any pair whose German or English side is in the
validation or test set (the sets overlap: newssyscomb2009 is part of newstest2009), counted in
`TrainSplit`. A run reads it with `data.dir: DIR, data.valid: newstest2017, data.test:
newstest2018`.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from attnlab.errors import DataError
from attnlab.files import writing

from .corpus import read_parallel
from .download import fetch_files, replacing

__all__ = ["DEFAULT_URL", "SETS", "TEST", "TEXT_SHA256", "VALID", "TrainSplit",
           "fetch_wmt_news", "text_sha256"]

DEFAULT_URL = ("https://raw.githubusercontent.com/Helsinki-NLP/OPUS-MT-testsets/"
               "ac0f19c0be3cb4e0d9450fcb2d7a9847c4bdd180/testsets/deu-eng")
SETS = ("news-test2008", "newssyscomb2009", *(f"newstest{year}" for year in range(2009, 2019)))
VALID, TEST = "newstest2017", "newstest2018"
UPSTREAM = {"de": "deu", "en": "eng"}  # our language codes -> the repository's file extensions

# SHA-256 of each file's text (gunzipped), computed once from a copy of the pinned commit.
TEXT_SHA256 = {
    "news-test2008.de": "6d86c805e6cd008c11143816daac272fdf5a3afea816983c43005717d6fe3ae2",
    "news-test2008.en": "134e1140848bb0d05e774dbe35b8b69602faf401250c03dbb437bdbe38c37b6f",
    "newssyscomb2009.de": "da74e91ec9f155a958a9cfcdb8e4291162b31b589e09306c40528aaf684d2fec",
    "newssyscomb2009.en": "b734a44294fa3b23a2491cd9a2c59fb5eb71332ace70b2c9039978863dd0e43d",
    "newstest2009.de": "c3a23d90e89c080cd3257a23365187e91939be4067176861fb88df7f61864b40",
    "newstest2009.en": "c74a4862decfe87f88fb10eacdcb6ac972a648f0dd6deeb25ac2dbc6128dc0b6",
    "newstest2010.de": "4f4b02d3abe150ca47a745d138d90f688edb20dd2d2fedca16aa05fd1e2018b1",
    "newstest2010.en": "1ebece77e333965cbc66fde735a6f17e026b4d6690f4f7fdaba839b7bdadac3b",
    "newstest2011.de": "033bc05659f61c5e51170973267d21e23a9a968557b866f3842c92e416a60e1b",
    "newstest2011.en": "d387569743c0fa9097df4d4e2c1dd9e6ba9ef3cee6e0f473da3204c887dcf8fd",
    "newstest2012.de": "946b9587b79271b0f3ce9cc8c0e5b310e3021ef598e1ba5dc2a24fef8960de30",
    "newstest2012.en": "f9e51f85c4948033fc7d77ef427f4d88908a8dd3f778970f62d0baafac3ff97e",
    "newstest2013.de": "d7ea35ab91ff3709e03ad9cb6bf5b4f2cc775cd2d72efd5254c4aec5e69663ca",
    "newstest2013.en": "ace268a1d9724ca76f6d8e5c720ffdc08f01bdce45630ed8b269dc7918e1c16e",
    "newstest2014.de": "ae5d110486bc33d7175e9e28c7d0051eb3e5fcd2166dd93371089852c091a20e",
    "newstest2014.en": "7294bccf2879a97b3706b95c9595f1459617a8ee7130d5d8581c910e69736971",
    "newstest2015.de": "796cce52ab248469187b60f60715a738a0b92944dc010a69a0083de7fae1b513",
    "newstest2015.en": "422fbb5a274c7aae1a0890381cd4516307ca7bc957604220d4871a91664121e5",
    "newstest2016.de": "738ca1ced4099937127be3208ba70d46e7a93550cd57cfd645f3d35e0e52a254",
    "newstest2016.en": "cd5c112a358d9c99b9557eb358e16d7a94f8fa93ad7aa61bf5f1141f2e1f8854",
    "newstest2017.de": "675e4f7e6045dacf56507e29b24106d771a571e0eb58d822806b086cdcf892f4",
    "newstest2017.en": "11adaec47477928dab9cb3fc9279d99dbbbfec7161f3abf6fddd759668fcd703",
    "newstest2018.de": "c53059fc440b3771aef2a83b15fddd8d2b3490c55b552dcae245f9a2df126c9c",
    "newstest2018.en": "721b207ca2b4e4689f978e17ee5edb0988d7c901acd651fd666bcd9c1950233b",
}


@dataclass(frozen=True)
class TrainSplit:
    """What went into train.{de,en}.gz: pairs read from the training sets, repeats dropped,
    pairs dropped because a side is in the validation or test set, and pairs kept."""

    read: int
    repeated: int
    held_out: int
    kept: int

    def summary(self) -> str:
        return (f"train: {self.kept:,} pairs from {len(SETS) - 2} sets ({self.read:,} read; "
                f"{self.repeated:,} repeated and {self.held_out:,} sharing a side with "
                f"{VALID} or {TEST} left out)")


def text_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a gzip file's text."""
    digest = hashlib.sha256()
    with gzip.open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_wmt_news(dest: str | os.PathLike, *, base_url: str = DEFAULT_URL,
                   from_dir: str | os.PathLike | None = None,
                   progress: Callable[[str], None] | None = print) -> TrainSplit:
    """Put the 24 files `{set}.{de,en}.gz` in `dest`, then write train.{de,en}.gz from them.

    A file already in `dest` whose text has the right digest is kept (cache). With `from_dir`,
    the others are copied from a local copy (the same `.gz` layout), which is first checked
    whole; without, they are downloaded from `{base_url}/{set}.{deu,eng}` (with attnlab.data's
    retries and digest checks) and gzipped here. Nothing in `dest` changes unless every file
    arrived right. Raises DataError for a failed download, a digest mismatch or an incomplete
    local copy.
    """
    dest = Path(dest)
    names = [f"{name}.gz" for name in TEXT_SHA256]
    in_place = from_dir is not None and Path(from_dir).resolve() == dest.resolve()
    if from_dir is not None:
        _check_local_copy(Path(from_dir), names)   # every file read and checked once
    missing = [] if in_place else [name for name in names if not _good(dest / name)]
    with writing(dest):
        dest.mkdir(parents=True, exist_ok=True)
        if from_dir is not None:
            _copy(Path(from_dir), dest, missing)
        elif missing:
            _download(dest, missing, base_url, progress)
        split = _write_train(dest)
    if progress is not None:
        cached = len(names) - len(missing)
        how = "copied from " + str(from_dir) if from_dir is not None else "downloaded"
        progress(f"WMT news de-en in {dest}: {len(missing)} files {how}, {cached} cached")
        progress(split.summary())
    return split


def _good(path: Path) -> bool:
    try:
        return path.is_file() and text_sha256(path) == TEXT_SHA256[path.name[:-3]]
    except (OSError, EOFError, gzip.BadGzipFile):
        return False


def _check_local_copy(directory: Path, names: list[str]) -> None:
    if directory.exists() and not directory.is_dir():
        hint = (f" (this one is in {directory.parent}: --from {directory.parent})"
                if directory.name in names else "")
        raise DataError(f"--from {directory} is a file, and --from wants the folder that "
                        f"holds the {len(names)} files {{set}}.{{de,en}}.gz of a local copy "
                        f"(e.g. {names[0]}){hint}")
    if not directory.is_dir():
        raise DataError(f"--from {directory}: no such directory")
    absent = [name for name in names if not (directory / name).is_file()]
    if absent:
        raise DataError(f"--from {directory}: missing {', '.join(absent)}")
    bad = [name for name in names if not _good(directory / name)]
    if bad:
        raise DataError(f"--from {directory}: {', '.join(bad)} not the known WMT news text "
                        f"(SHA-256 of the gunzipped file differs, or not gzip)")


def _copy(source: Path, dest: Path, names: list[str]) -> None:
    with ExitStack() as renames:  # every file renamed into place together, at the end
        for name in names:
            with open(source / name, "rb") as stream:
                shutil.copyfileobj(stream, renames.enter_context(replacing(dest / name)))


def _download(dest: Path, names: list[str], base_url: str,
              progress: Callable[[str], None] | None) -> None:
    """Fetch the text files into a staging folder, then gzip them all into `dest`."""
    upstream = {}
    for name in names:
        stem, language = name[:-3].rsplit(".", 1)
        upstream[f"{stem}.{UPSTREAM[language]}"] = name
    staging = dest / ".download"
    fetched = fetch_files(staging, {raw: TEXT_SHA256[name[:-3]] for raw, name in upstream.items()},
                          base_url=base_url, dataset="WMT news", progress=progress)
    with ExitStack() as renames:
        for raw, name in upstream.items():
            out = renames.enter_context(replacing(dest / name))
            with open(fetched[raw], "rb") as text, \
                    gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as packed:
                shutil.copyfileobj(text, packed)
    shutil.rmtree(staging)


def _read(dest: Path, name: str) -> list[tuple[str, str]]:
    return read_parallel(dest / f"{name}.de.gz", dest / f"{name}.en.gz")


def _write_train(dest: Path) -> TrainSplit:
    held = [pair for name in (VALID, TEST) for pair in _read(dest, name)]
    held_sides = {side.strip() for pair in held for side in pair} - {""}
    pairs = [pair for name in SETS if name not in (VALID, TEST) for pair in _read(dest, name)]
    seen: set[tuple[str, str]] = set()
    kept, repeated, held_out = [], 0, 0
    for pair in pairs:
        key = (pair[0].strip(), pair[1].strip())
        if key in seen:
            repeated += 1
        elif key[0] in held_sides or key[1] in held_sides:
            held_out += 1
        else:
            seen.add(key)
            kept.append(pair)
    with ExitStack() as renames:
        for index, language in enumerate(("de", "en")):
            out = renames.enter_context(replacing(dest / f"train.{language}.gz"))
            with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as packed:
                packed.write("".join(pair[index] + "\n" for pair in kept).encode("utf-8"))
    return TrainSplit(len(pairs), repeated, held_out, len(kept))
