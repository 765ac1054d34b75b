"""A statistical word aligner as a baseline, so that attention AER can be read against it.

eflomal (Östling & Tiedemann 2017: Bayesian IBM1 -> HMM -> HMM+fertility, Gibbs sampling) is
trained on the gold set's own sentence pairs, plus any extra parallel text, in both directions;
the two directional alignments are merged by a symmetrisation heuristic (Och & Ney 2003; Koehn
et al. 2003) and scored with the same AER as attention (aer.py). eflomal is an
optional dependency: `pip install 'attnlab[aligner]'`.

Links are (source index, target index), 0-based, as everywhere in attnlab.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from attnlab.errors import DataError, UserError

from .aer import AlignmentScore, aer
from .golds import GoldSet
from .links import Link, read_links

# The eight cells around a link: "diag" in grow-diag means the corners count too.
NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def _grow_diag(forward: set[Link], reverse: set[Link]) -> set[Link]:
    """Start from the intersection; repeatedly add a union link next to a chosen link (corners
    included) while its source word or its target word is still unaligned."""
    union = forward | reverse
    alignment = forward & reverse
    grew = True
    while grew:
        grew = False
        for source, target in sorted(alignment):  # a pass over the links it starts with
            for ds, dt in NEIGHBOURS:
                link = (source + ds, target + dt)
                if link in union and link not in alignment and _one_free(alignment, link):
                    alignment.add(link)
                    grew = True
    return alignment


def _one_free(alignment: set[Link], link: Link) -> bool:
    return not any(s == link[0] for s, _ in alignment) or not any(
        t == link[1] for _, t in alignment)


def _both_free(alignment: set[Link], link: Link) -> bool:
    return not any(s == link[0] or t == link[1] for s, t in alignment)


def _final(forward: set[Link], reverse: set[Link], free: Callable) -> set[Link]:
    """grow-diag, then add each forward link and then each reverse link whose words are
    `free` (one of them for FINAL, both for FINAL-AND) in the alignment so far."""
    alignment = _grow_diag(forward, reverse)
    for link in sorted(forward) + sorted(reverse):
        if link not in alignment and free(alignment, link):
            alignment.add(link)
    return alignment


METHODS: dict[str, Callable[[set[Link], set[Link]], set[Link]]] = {
    "intersection": lambda forward, reverse: forward & reverse,
    "union": lambda forward, reverse: forward | reverse,
    "grow-diag": _grow_diag,
    "grow-diag-final": lambda forward, reverse: _final(forward, reverse, _one_free),
    "grow-diag-final-and": lambda forward, reverse: _final(forward, reverse, _both_free),
}


def symmetrise(forward: Iterable[Link], reverse: Iterable[Link],
               method: str = "grow-diag-final-and") -> set[Link]:
    """Merge the links of a source->target and a target->source alignment of one sentence pair.

    forward, reverse: (source, target) links, 0-based, both in that orientation.
    "intersection" is precise, "union" has high recall; the grow-diag family (Och & Ney 2003,
    sec. 4.2; Koehn et al. 2003, sec. 4.1) starts from the intersection and grows it: links of
    the union next to a chosen one (the 8 neighbours) while one of their two words is unaligned,
    then with "-final" each remaining forward and then reverse link whose source or target word
    is unaligned, with "-final-and" whose source and target words both are. The heuristic
    depends on visiting order; links are visited sorted by (source, target). So
    intersection ⊆ grow-diag ⊆ grow-diag-final(-and) ⊆ union.
    """
    if method not in METHODS:
        raise UserError(f"unknown symmetrisation method {method!r}; options: {sorted(METHODS)}")
    forward = {(int(s), int(t)) for s, t in forward}
    reverse = {(int(s), int(t)) for s, t in reverse}
    return METHODS[method](forward, reverse)


def _import_eflomal():
    try:
        import eflomal
    except ImportError:
        raise UserError("the aligner baseline needs eflomal: pip install 'attnlab[aligner]'"
                        ) from None
    return eflomal


def eflomal_links(sources: Sequence[str], targets: Sequence[str]
                  ) -> tuple[list[frozenset[Link]], list[frozenset[Link]]]:
    """Train eflomal on the pairs (whitespace tokens, as given) in both directions; returns the
    forward and the reverse links of each pair, both as (source, target), 0-based."""
    eflomal = _import_eflomal()
    with tempfile.TemporaryDirectory(prefix="attnlab-eflomal-") as folder:
        forward, reverse = Path(folder, "forward.links"), Path(folder, "reverse.links")
        # eflomal writes its links to files only; it reads any iterable of lines.
        eflomal.Aligner().align(list(sources), list(targets), links_filename_fwd=str(forward),
                                links_filename_rev=str(reverse), quiet=True)
        return ([links.sure for links in read_links(forward)],
                [links.sure for links in read_links(reverse)])


def aligner_aer(gold: GoldSet, extra_pairs: Iterable[tuple[str, str]] = (), *,
                method: str = "grow-diag-final-and", extra_name: str = "extra") -> AlignmentScore:
    """AER of eflomal, trained on the gold set's pairs plus `extra_pairs` (source, target).

    More parallel text (e.g. Multi30k's training pairs; `extra_name` names them in the score)
    gives the aligner better statistics; only the gold pairs are scored. Words are whitespace
    tokens, lowercased on both sides. Both directions are trained and merged by `symmetrise`.
    Not deterministic: eflomal seeds its samplers from /dev/urandom and offers no seed, so
    the AER moves a little from run to run (0.366 and 0.371 in two runs on RWTH de-en with
    all of Multi30k).
    """
    if method not in METHODS:
        raise UserError(f"unknown symmetrisation method {method!r}; options: {sorted(METHODS)}")
    if not gold.sources:
        raise DataError(f"{gold.name}: no sentence pairs to align")
    extra = list(extra_pairs)
    sources = [line.lower() for line in gold.sources] + [pair[0].lower() for pair in extra]
    targets = [line.lower() for line in gold.targets] + [pair[1].lower() for pair in extra]
    forward, reverse = eflomal_links(sources, targets)
    pairs = len(gold.sources)  # the gold pairs come first
    predicted = [symmetrise(f, r, method) for f, r in zip(forward[:pairs], reverse[:pairs],
                                                           strict=True)]
    extra_text = f" + {len(extra):,} {extra_name} pairs" if extra else ""
    name = f"eflomal (both directions, {method}, lowercased) on {gold.name}{extra_text}"
    return AlignmentScore(name, aer(predicted, gold.alignments), pairs, 0, "words",
                          method="a statistical aligner baseline, not attention",
                          gold=gold.record)
