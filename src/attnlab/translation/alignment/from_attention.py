"""Links from attention, and the AER of a run's attention (Och & Ney 2003).

AER is computed as Luong et al. (2015, sec. 5.4) do: the model reads the *reference* (forced
decoding), and each target unit links to the source unit it attends to most (argmax of the
attention, the "</s>" row and column left out). The unit is the word (subword attention merged
to whitespace words), or the character for a character-level run such as the dates task, whose
gold alignments link characters. Which gold sets a run is scored on is chosen in golds.py.
Attention matrices are (T_tgt, T_src), as the models return them: row j is target unit j's
distribution over source units.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attnlab.errors import DataError
from attnlab.train.progress import progress_bar

from ..labels import LabelledAttention
from .aer import AlignmentScore, aer, aer_counts
from .forced import forced_alignment
from .golds import GoldSet
from .links import AlignmentSet, Link
from .protocol import AlignableRun

EOS = "</s>"


def alignment_from_attention(
    weights: np.ndarray, mode: str = "argmax", threshold: float = 0.5
) -> set[Link]:
    """Hard links from soft attention weights (T_tgt, T_src); returns {(source i, target j)}.

    mode "argmax": each target word links to its most-attended source word (as in Luong et al.
    2015, sec. 5.4). mode "threshold": every pair with weight >= threshold. A row with no
    weight (a padded target position) links to nothing. Trim rows/columns of tokens that the gold
    alignment lacks, such as <eos>, before calling.
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(f"weights must be a (T_tgt, T_src) matrix, got shape {weights.shape}.")
    if mode == "argmax":
        live = weights.sum(axis=1) > 0
        best = weights.argmax(axis=1)  # (T_tgt,)
        return {(int(best[j]), j) for j in range(weights.shape[0]) if live[j]}
    if mode == "threshold":
        targets, sources = np.nonzero(weights >= threshold)
        return {(int(i), int(j)) for j, i in zip(targets, sources, strict=True)}
    raise ValueError(f"unknown alignment mode {mode!r}; options: ['argmax', 'threshold']")


def attention_units(labelled: LabelledAttention, pieces: bool
                    ) -> tuple[np.ndarray | None, list[str], list[str]]:
    """(attention (T, S) or None for a model without attention, the S source units, the T
    target units), at piece level (the characters of a character-level run) or word level;
    "</s>" included."""
    if pieces:
        return labelled.attention, labelled.source_pieces, labelled.target_pieces
    return labelled.word_attention, labelled.source_words, labelled.target_words


def alignment_weights(labelled: LabelledAttention, characters: bool = False) -> np.ndarray:
    """Attention (T, S) over target and source units without "</s>": words, or pieces (the
    characters of a character-level run) when `characters`."""
    weights, sources, targets = attention_units(labelled, characters)
    if weights is None:
        raise DataError("this model has no attention, so it gives no alignments")
    rows = len(targets) - (targets[-1:] == [EOS])
    cols = len(sources) - (sources[-1:] == [EOS])
    return np.asarray(weights)[:rows, :cols]


def end_row(labelled: LabelledAttention, characters: bool = False) -> np.ndarray | None:
    """The "</s>" row of `labelled`'s attention over the source units without "</s>" (1, S),
    units as alignment_weights'; None without a "</s>" target unit."""
    weights, sources, targets = attention_units(labelled, characters)
    if weights is None or targets[-1:] != [EOS]:
        return None
    cols = len(sources) - (sources[-1:] == [EOS])
    return np.asarray(weights)[-1:, :cols]


def end_share(labelled: LabelledAttention, characters: bool = False) -> float | None:
    """The mean weight the target units (without "</s>") put on the source's "</s>": where a
    model parks attention it does not spend on a word (fairseq #4446 reports > 0.6); None
    without a "</s>" column or row to measure."""
    weights, sources, targets = attention_units(labelled, characters)
    if weights is None or sources[-1:] != [EOS]:
        return None
    rows = len(targets) - (targets[-1:] == [EOS])
    return float(np.asarray(weights)[:rows, -1].mean()) if rows else None


def argmax_links(labelled: LabelledAttention, characters: bool = False) -> set[Link]:
    """Each target unit linked to its most attended source unit (see alignment_weights)."""
    weights = alignment_weights(labelled, characters)
    return alignment_from_attention(weights) if weights.size else set()


def score_alignments(run: AlignableRun, gold: GoldSet, *, batch_size: int = 64,
                     progress: bool = False) -> AlignmentScore:
    """AER of the argmax attention of forced decoding (see the module docstring); `progress`:
    a bar on a terminal while the pairs are aligned."""
    with progress_bar(len(gold.sources), "aligning", enabled=progress, unit="pair") as bar:
        predicted, kept, shapes, ends = _predicted_links(run, gold, batch_size, bar.update)
    diagonal = [diagonal_links(*shape) for shape in shapes]
    return AlignmentScore(gold.name, aer(predicted, kept), len(kept), len(gold.sources) - len(kept),
                          "characters" if run.character_level else "words",
                          counts=aer_counts(predicted, kept).tolist(),
                          diagonal_counts=aer_counts(diagonal, kept).tolist(),
                          end_share=float(np.mean(ends)) if ends else None, gold=gold.record)


def gold_units(source: str, target: str, characters: bool) -> tuple[int, int]:
    """(target, source) sizes of a gold pair in its units: characters, or whitespace words."""
    if characters:
        return len(target), len(source)
    return len(target.split()), len(source.split())


def diagonal_links(targets: int, sources: int) -> set[Link]:
    """The trivial aligner's links for a pair of `targets` x `sources` units: target unit t to
    source unit round(t (S - 1) / (T - 1)), one link per target unit as the argmax has."""
    if not targets or not sources:
        return set()
    scale = (sources - 1) / (targets - 1) if targets > 1 else 0.0
    return {(round(t * scale), t) for t in range(targets)}


def _predicted_links(run: AlignableRun, gold: GoldSet, batch_size: int,
                     tick: Callable[[int], None] | None = None
                     ) -> tuple[list[set[Link]], list[AlignmentSet], list[tuple[int, int]],
                                list[float]]:
    """The argmax links of each pair whose units match the gold's words (or characters), those
    pairs' gold links, their (target, source) sizes in units, and their end_share."""
    if not run.has_attention:
        raise DataError("this model has no attention, so it gives no alignments to score")
    characters = run.character_level
    forced = forced_alignment(run.model, run.vocabs, gold.sources, gold.targets,
                              batch_size=batch_size, tick=tick)
    predicted, kept, shapes, ends = [], [], [], []
    for alignment, source, target, links in zip(forced, gold.sources, gold.targets,
                                                gold.alignments, strict=True):
        weights = alignment_weights(alignment, characters)
        units = gold_units(source, target, characters)
        if weights.shape != units:
            continue  # a normalisation of the vocabulary merged or dropped a unit
        predicted.append(alignment_from_attention(weights) if weights.size else set())
        kept.append(links)
        shapes.append(units)
        if (share := end_share(alignment, characters)) is not None:
            ends.append(share)
    if not kept:
        raise DataError(f"{gold.name}: no sentence pair could be aligned unit by unit")
    return predicted, kept, shapes, ends
