"""Guided alignment: train the attention towards a word aligner's links (Chen et al. 2016,
"Guided Alignment Training for Topic-Aware Neural Machine Translation"; Garg et al. 2019,
"Jointly Learning to Align and Translate with Transformer Models"; OpenNMT-py -lambda_align,
Marian --guided-alignment).

The rows guided are those the decoder uses: row t of the attention is the one that produced
target piece t (teacher forcing, as in training), computed from s_{t-1} in a Bahdanau decoder
(its context c_t feeds s_t and the output that emits y_t) and from h_t in a Luong decoder (the
state that then emits y_t through h~_t); the same rows the report's row check scores. Word
links become piece links: every piece of target word j is linked to every piece of each source
word linked to j, and g_t is row t of that 0/1 matrix divided by its sum. Target pieces without
links ("</s>", unaligned words) are not guided. With C the set of guided rows:

    ce:  L = -1/|C| sum_{t in C} sum_i g_{t,i} log a_{t,i}        (Garg et al. 2019)
    mse: L =  1/|C| sum_{t in C} sum_i (a_{t,i} - g_{t,i})^2      (Chen et al. 2016)

a_{t,i} below GUIDE_FLOOR counts as GUIDE_FLOOR in the log (local attention has exact zeros
outside its window). L is 0 for mse, and minimal for ce (0 when each row has one link), when
the attention equals g. Soft mechanisms only: hard attention samples its context, so its
weights are not what the decoder reads (refused in one sentence).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from attnlab.attention import Weights, as_dense
from attnlab.errors import ConfigError, DataError
from attnlab.train.config import GuidedAlignmentConfig

from .alignment import read_corpus_links
from .config import DataConfig
from .corpus import EncodedCorpus, Vocabularies, split_paths
from .labels import words

GUIDE_FLOOR = 1e-12
COSTS = ("ce", "mse")

PieceLinks = Tensor  # (L, 2) long: (target piece, source piece) pairs of one sentence pair


def guided_alignment_loss(attention: Tensor, guide: Tensor, cost: str) -> Tensor:
    """L of attention (B, T, S) against the guide (B, T, S) of 0/1 piece links (see the module
    docstring); a zero scalar when no row has links."""
    if cost not in COSTS:
        raise ValueError(f"unknown guided alignment cost {cost!r}; options: {list(COSTS)}")
    totals = guide.sum(-1, keepdim=True)  # (B, T, 1)
    rows = totals.squeeze(-1) > 0  # (B, T): the guided rows C
    if not rows.any():
        return attention.sum() * 0.0
    target = guide / totals.clamp_min(1.0)  # g_t, rows summing to 1
    if cost == "ce":
        per_row = -(target * attention.clamp_min(GUIDE_FLOOR).log()).sum(-1)
    else:
        per_row = ((attention - target) ** 2).sum(-1)
    return per_row[rows].mean()


def piece_links(source_pieces: Sequence[str], target_pieces: Sequence[str],
                word_links: frozenset[tuple[int, int]], vocabs) -> tuple[PieceLinks, int]:
    """Word links (source word, target word) of one pair as piece links (target piece, source
    piece) over its pieces ("</s>" last on both sides, never linked), and how many word links
    fall outside the sentence (a tokenisation that differs from the aligner's)."""
    _, source_word = words(vocabs.src, list(source_pieces))
    _, target_word = words(vocabs.tgt, list(target_pieces))
    source_of: dict[int, list[int]] = {}
    for piece, word in enumerate(source_word[:-1]):  # "</s>" is not a word of the text
        source_of.setdefault(word, []).append(piece)
    target_of: dict[int, list[int]] = {}
    for piece, word in enumerate(target_word[:-1]):
        target_of.setdefault(word, []).append(piece)
    pairs: list[tuple[int, int]] = []
    outside = 0
    for source, target in sorted(word_links):
        if source not in source_of or target not in target_of:
            outside += 1
            continue
        pairs.extend((t, s) for t in target_of[target] for s in source_of[source])
    return torch.tensor(pairs, dtype=torch.long).reshape(-1, 2), outside


def guide_tensor(links: Sequence[PieceLinks], targets: int, sources: int,
                 device: torch.device | str = "cpu") -> Tensor:
    """The (B, targets, sources) 0/1 guide of a batch's piece links."""
    guide = torch.zeros(len(links), targets, sources, device=device)
    for row, pairs in enumerate(links):
        if len(pairs):
            pairs = pairs.to(device)
            guide[row, pairs[:, 0], pairs[:, 1]] = 1.0
    return guide


def check_soft_attention(model_config) -> None:
    """ConfigError (one sentence) unless the decoder has soft attention to guide."""
    decoder = model_config.decoder
    if decoder.kind == "none":
        raise ConfigError("train.guided_alignment needs attention to guide, and "
                          "model.decoder.kind none has none")
    if decoder.attention.hard:
        raise ConfigError("train.guided_alignment works with soft attention (global, local-m, "
                          "local-p) only: hard attention samples the source position its "
                          "context comes from, so its weights are not what the decoder reads")


class CorpusGuide:
    """The piece links of every kept training pair (in the encoded corpus's order), and the
    guided-alignment term of a training batch."""

    def __init__(self, config: GuidedAlignmentConfig, links: list[PieceLinks]):
        self.config, self.links = config, links

    def loss(self, attention: Weights, indices: Sequence[int]) -> Tensor:
        """weight * L for attention (B, T, S) of the training pairs `indices` (local
        attention's windows are densified here: the guide is (B, T, S) too)."""
        attention = as_dense(attention)
        guide = guide_tensor([self.links[i] for i in indices], attention.shape[1],
                             attention.shape[2], attention.device)
        return self.config.weight * guided_alignment_loss(attention, guide.to(attention.dtype),
                                                          self.config.cost)


# A guided run is refused when more than this share of its word links, or of its training
# pairs that have links, cannot be used: it would train (nearly) unguided while asked to guide.
REFUSE_ABOVE = 0.5


def corpus_guide(config: GuidedAlignmentConfig, data: DataConfig, vocabs: Vocabularies,
                 encoded: EncodedCorpus, pairs: int,
                 log: Callable[[str], None] = print,
                 warn: Callable[[str], None] | None = None) -> CorpusGuide:
    """Read config.links for the `pairs` training pairs of `data` (see
    alignment/corpus_links.py for its checks) and turn the kept pairs' word links into piece
    links; says how many links it found. Links outside their sentence (a tokenisation other
    than the aligner's, or links made for other text) are left out: DataError (one sentence,
    before any training) when more than REFUSE_ABOVE of the links, or of the pairs that have
    links, are unusable, or when no link is left; a smaller share is `warn`ed (default: one
    line on standard error, from the first process only)."""
    source, target = split_paths(data, data.train)
    corpus_links = read_corpus_links(config.links, source, target, pairs)
    found, outside, total, linked, lost = [], 0, 0, 0, 0
    for line, (source_ids, target_ids) in zip(encoded.lines, encoded.pairs, strict=True):
        source_pieces = [vocabs.src.id_to_piece(i) for i in source_ids] + ["</s>"]
        target_pieces = [vocabs.tgt.id_to_piece(i) for i in target_ids] + ["</s>"]
        links, missed = piece_links(source_pieces, target_pieces, corpus_links[line], vocabs)
        found.append(links)
        outside, total = outside + missed, total + len(corpus_links[line])
        linked += bool(corpus_links[line])          # pairs the file gives links
        lost += bool(corpus_links[line]) and not len(links)   # ... none of them usable
    kept = len(encoded.lines)
    unusable = (f"{outside:,} of its {total:,} word links for the {kept:,} training pairs fall "
                f"outside their sentence, and {lost:,} of the {linked:,} pairs with links have "
                f"none left")
    if not total:
        raise DataError(f"{config.links} has no word link for any of the {kept:,} training "
                        f"pairs, so guided alignment would guide nothing")
    if outside > REFUSE_ABOVE * total or lost > REFUSE_ABOVE * linked:
        raise DataError(f"{config.links}: {unusable} (more than half unusable), so guided "
                        f"alignment would train nearly unguided; write the file again with "
                        f"attnlab align --src {source} --tgt {target} --output {config.links}")
    if outside:
        (warn or _warn_once)(f"guided alignment: {config.links}: {unusable} "
                             f"({outside / total:.1%} of the links); those links are left out "
                             f"and those pairs train unguided")
    unguided = kept - sum(1 for links in found if len(links))
    dropped = f", {outside:,} outside their sentence left out" if outside else ""
    log(f"guided alignment ({config.cost}, weight {config.weight:g}): {total:,} word links "
        f"from {config.links}{dropped}; {kept - unguided:,} of {kept:,} training pairs guided")
    return CorpusGuide(config, found)


def _warn_once(message: str) -> None:
    """A warning on standard error, from rank 0 only (each torchrun rank reads the links)."""
    if os.environ.get("RANK", "0") == "0":
        print(f"attnlab: warning: {message}", file=sys.stderr, flush=True)
