"""Gold sets: sentence pairs with their gold links, and which of them a run's AER is computed
on, each chosen explicitly by the caller.

- a gold file for the evaluated pairs (`evaluate --align-gold`): gold_from_file;
- the dates task's `{split}.align` beside the source file (character links): dates_gold;
- the RWTH German-English set (`rwth_gold`) from a given folder (`--rwth DIR`), or else from
  `$ATTNLAB_DATA/rwth-deen-gold` when ATTNLAB_DATA is set and that folder exists: rwth_gold_for_run.

Nothing here guesses where data lies: without `--rwth` and ATTNLAB_DATA there is no RWTH gold.
Every reader checks that each pair's links lie inside its sentences (in words, or characters for
the dates task's gold): a link past either end is one DataError naming the file and line, never
scored as if it were a mistake of the model.
A model without attention gets AER only on a gold set asked for by name (a file or a folder).
choose_golds puts these together for `evaluate` and says in one line what it chose, or why
there is no gold set; scored_on_rwth tells from an evaluation record whether it was the RWTH set.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from attnlab.data import read_lines
from attnlab.errors import DataError

from .links import AlignmentSet, Link, read_links
from .protocol import AlignableRun

DATA_VARIABLE = "ATTNLAB_DATA"
RWTH_NAME = "rwth-deen-gold"
RWTH_FILES = ("test.de-en", "deen.talp")
GERMAN_ENGLISH = (("de", "en"), ("en", "de"))


@dataclass
class GoldSet:
    """Sentence pairs with their gold alignments; links (source, target) 0-based. name: the
    set's full name (which set, which pairs were left out), never a folder of this machine:
    records and reports carry it; kind: "rwth", "dates" or "file", what the
    front-ends ask instead of reading the name; title: how a reader is told which it is."""

    name: str
    sources: list[str]
    targets: list[str]
    alignments: list[AlignmentSet]
    kind: str = "file"
    title: str = ""
    short: str = ""    # a table's column: "RWTH", "dates"
    origin: str = ""   # the file or folder it was read from: told on the command line only

    @property
    def record(self) -> dict[str, str]:
        """{"name", "kind", "title", "short"}: what every record scored on this set says of
        it; a report groups and names gold sets by it, never by parsing `name`."""
        return {"name": self.name, "kind": self.kind, "title": self.title or self.name,
                "short": self.short or self.kind}

    def __post_init__(self):
        if not len(self.sources) == len(self.targets) == len(self.alignments):
            raise DataError(f"{self.name}: {len(self.sources)} sources, {len(self.targets)} "
                            f"targets and {len(self.alignments)} alignment lines do not match")


def dates_gold_path(src_path: str | os.PathLike) -> Path:
    """Where the dates task keeps the gold links of `{split}.src`: `{split}.align` beside it."""
    path = Path(src_path)
    stem = path.name.removesuffix(".gz").rsplit(".", 1)[0]
    return path.with_name(f"{stem}.align")


def gold_from_file(path: str | os.PathLike, sources: list[str], targets: list[str], *,
                   one_indexed: bool = False, first_lines: bool = False,
                   characters: bool | None = None) -> GoldSet:
    """Gold links for the pairs (sources[k], targets[k]) from a Pharaoh file (0-based, or
    1-indexed RWTH/TALP with `one_indexed`). `first_lines`: the pairs are the first lines of
    the file's corpus, so only that many lines of links are used. `characters`: whether the
    links count characters (the dates task's) or whitespace words; None when the caller does
    not know, and they are checked against the characters, a bound of either. DataError naming
    the file and line for a link outside its sentence pair, or when the file has fewer lines
    than pairs (or, without `first_lines`, another number)."""
    links = read_links(path, one_indexed=one_indexed)
    if first_lines:
        links = links[: len(sources)]
    check_within(links, sources, targets, path, one_indexed=one_indexed, characters=characters)
    return GoldSet(Path(path).name, sources, targets, links,
                   title=f"the gold of {Path(path).name}", short=Path(path).name,
                   origin=str(path))


def check_within(alignments: list[AlignmentSet], sources: list[str], targets: list[str],
                 path: str | os.PathLike, *, one_indexed: bool = False,
                 characters: bool | None = False) -> None:
    """DataError naming `path` and the line unless there is one line of links per pair and each
    link (source i, target j) has i and j inside pair k's source and target: whitespace words,
    or characters (also with `characters` None: a sentence has at least as many characters as
    words). The link is shown as the file writes it (1-indexed with `one_indexed`)."""
    if len(alignments) != len(sources):
        raise DataError(f"{path} has {len(alignments):,} lines of links for {len(sources):,} "
                        f"sentence pairs; a gold file has one line per pair")
    unit, base = ("words" if characters is False else "characters"), int(one_indexed)
    for number, (links, source, target) in enumerate(
            zip(alignments, sources, targets, strict=False), start=1):   # GoldSet: targets
        width, height = (len(source), len(target)) if characters is not False else (
            len(source.split()), len(target.split()))
        outside = sorted((i, j) for i, j in links.possible if i >= width or j >= height)
        if outside:
            i, j = outside[0]
            written = f"{i + base}{'-' if (i, j) in links.sure else 'p'}{j + base}"
            raise DataError(f"{path} line {number}: link {written} is outside its sentence "
                            f"pair of {width} x {height} {unit} (source x target)")


def rwth_gold(directory: str | os.PathLike, *, reverse: bool = False) -> GoldSet:
    """The RWTH German-English gold set: `test.de-en` ("German ||| English", tokenised) and
    `deen.talp` (1-indexed German-English links). `reverse` makes English the source side."""
    directory = Path(directory)
    text, links = (directory / name for name in RWTH_FILES)
    sources, targets = [], []
    for number, line in enumerate(read_lines(text), start=1):
        parts = line.split(" ||| ")
        if len(parts) != 2:
            raise DataError(f"{text} line {number}: expected 'German ||| English'")
        sources.append(parts[0].strip())
        targets.append(parts[1].strip())
    gold = read_links(links, one_indexed=True)
    check_within(gold, sources, targets, links, one_indexed=True)
    if reverse:
        gold = [AlignmentSet(_flip(a.sure), _flip(a.possible)) for a in gold]
        sources, targets = targets, sources
    title = "the RWTH German-English gold" + (", English-German" if reverse else "")
    return GoldSet("RWTH en-de gold" if reverse else "RWTH de-en gold", sources, targets, gold,
                   "rwth", title, "RWTH", origin=str(directory))


def _flip(links: frozenset[Link]) -> frozenset[Link]:
    return frozenset((target, source) for source, target in links)


def scored_on_rwth(record: dict) -> bool:
    """Whether an evaluation record (a run's `alignments`: AlignmentScore dicts) has an AER on
    the RWTH gold set."""
    return any(score["gold"]["kind"] == "rwth" for score in record.get("alignments") or [])


def dates_gold(run: AlignableRun, src_path: str | os.PathLike | None, sources: list[str],
               targets: list[str], *, first_lines: bool = False) -> GoldSet | None:
    """The dates task's gold of the pairs (sources[k], targets[k]) read from `src_path`: the
    `.align` file beside it (see dates_gold_path), whose links go from the `.src` file to the
    `.tgt` file, so they are turned round for a run that reads `.tgt` (one trained the other
    way). None when there is no such file, no `src_path`, or the model has no attention.
    `first_lines`: see gold_from_file."""
    if not run.has_attention or src_path is None:
        return None
    path = dates_gold_path(src_path)
    if not path.is_file():
        return None
    if Path(src_path).name.removesuffix(".gz").endswith(".tgt"):
        ahead = gold_from_file(path, targets, sources, first_lines=first_lines, characters=True)
        gold = replace(ahead, sources=sources, targets=targets,
                       alignments=[AlignmentSet(_flip(a.sure), _flip(a.possible))
                                   for a in ahead.alignments])
    else:
        gold = gold_from_file(path, sources, targets, first_lines=first_lines, characters=True)
    return replace(gold, name=f"dates task gold {gold.name}", kind="dates",
                   title="the dates task's gold", short="dates")


def within_reach(run: AlignableRun, gold: GoldSet, *, reverse: bool = False) -> GoldSet:
    """The gold pairs a location-score model can address: its softmax covers max_len source
    positions, so longer sources (EOS included) are left out and the set's name says so.
    `reverse`: the run reads the gold's targets (a model trained the other way)."""
    limit = run.model.max_source_length
    if limit is None:
        return gold
    read = gold.targets if reverse else gold.sources
    keep = [k for k, source in enumerate(read)
            if len(run.vocabs.src.encode(source)) + 1 <= limit]
    if len(keep) == len(gold.sources):
        return gold
    dropped = len(gold.sources) - len(keep)
    return replace(gold, name=f"{gold.name}; {dropped} pairs longer than max_len={limit} left "
                              f"out", sources=[gold.sources[k] for k in keep],
                   targets=[gold.targets[k] for k in keep],
                   alignments=[gold.alignments[k] for k in keep])


def environment_rwth_dir() -> Path | None:
    """$ATTNLAB_DATA/rwth-deen-gold when ATTNLAB_DATA is set and that folder exists, else None."""
    root = os.environ.get(DATA_VARIABLE)
    if not root:
        return None
    directory = Path(root) / RWTH_NAME
    return directory if directory.is_dir() else None


def rwth_gold_for_run(run: AlignableRun,
                      directory: str | os.PathLike | None = None) -> GoldSet | None:
    """The RWTH gold set in the run's direction (English the source side for an en-de run).

    From `directory` when given, for any run: it was asked for. Without it, from
    environment_rwth_dir() for a German-English (de-en or en-de) run with attention, and None
    when that is not such a run or the variable or folder is missing.
    """
    languages = (run.config.data.src_lang, run.config.data.tgt_lang)
    if directory is None:
        if not run.has_attention or languages not in GERMAN_ENGLISH:
            return None
        directory = environment_rwth_dir()
        if directory is None:
            return None
    return rwth_gold(directory, reverse=languages == ("en", "de"))


@dataclass
class GoldChoice:
    """The gold sets a run's AER is computed on, and why there are none when there are none."""

    golds: list[GoldSet] = field(default_factory=list)
    reason: str = ""

    def line(self) -> str:
        """'AER on: <gold>, <n> pairs; ...' or 'AER: none (<reason>)'."""
        if not self.golds:
            return f"AER: none ({self.reason})"
        return "AER on: " + "; ".join(
            f"{gold.name}{f' ({gold.origin})' if gold.origin else ''}, {len(gold.sources)} pairs"
            for gold in self.golds)


def choose_golds(run: AlignableRun, src_path: str | os.PathLike | None, sources: list[str],
                 targets: list[str], *, align_gold: str | os.PathLike | None = None,
                 one_indexed: bool = False, rwth: str | os.PathLike | None = None,
                 use_rwth: bool = True) -> GoldChoice:
    """The gold sets that apply to evaluating `run` on (sources[k], targets[k]) read from
    `src_path`: the `align_gold` file of these pairs, else the dates task's gold beside
    `src_path`; then the RWTH set (rwth_gold_for_run: `rwth`, else $ATTNLAB_DATA's for a
    German-English run with attention) unless not `use_rwth`."""
    pairs: GoldSet | None
    if align_gold is not None:
        pairs = gold_from_file(align_gold, sources, targets, one_indexed=one_indexed,
                               characters=run.character_level)
    else:
        pairs = dates_gold(run, src_path, sources, targets)
    found = rwth_gold_for_run(run, rwth) if use_rwth else None
    golds = [gold for gold in (pairs, found) if gold is not None]
    return GoldChoice(golds, "" if golds else _no_gold_reason(run, src_path, use_rwth))


def _no_gold_reason(run: AlignableRun, src_path: str | os.PathLike | None, use_rwth: bool) -> str:
    languages = (run.config.data.src_lang, run.config.data.tgt_lang)
    if not run.has_attention:
        return "this model has no attention, so its alignments cannot be scored"
    if languages in GERMAN_ENGLISH:
        if not use_rwth:
            return "--no-rwth, and no other gold set was given"
        return (f"no RWTH gold set: give --rwth DIR, or set {DATA_VARIABLE} to a folder "
                f"holding {RWTH_NAME}/")
    beside = (f"no {dates_gold_path(src_path).name} beside {src_path}, "
              if src_path is not None else "")
    return (f"no gold alignments for a {'-'.join(languages)} run ({beside}not German-English); "
            f"give --align-gold FILE or --rwth DIR")
