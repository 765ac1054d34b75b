"""Scoring captions: corpus BLEU-1..4 against every reference, and (with boxes) localisation.

The localisation score asks whether the model looks at what it names: for each object a
caption mentions ("<colour> <shape>"), the share of the attention mass alpha_t that falls
inside that object's box while its colour and its shape word are produced, averaged over
those words. Attention is spread evenly over each annotation cell (its share of the image), so
uniform attention scores exactly the share of the image the boxes cover: the chance level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sacrebleu.metrics import BLEU

from attnlab.errors import DataError

from .data import ObjectBox
from .shapes import COLOURS, SHAPES


def caption_bleu(hypotheses: list[str], references: list[list[str]]) -> tuple[dict, str]:
    """Corpus BLEU-1..4 (0-100) of tokenised captions, each against all its references.

    hypotheses: one caption per image; references: per image its (any number of) captions.
    Returns ({"bleu1": ..., "bleu4": ...}, sacreBLEU signature of BLEU-4). Text is split on
    spaces only (`tok:none`): Karpathy's captions are already lowercased and tokenised.
    """
    if len(hypotheses) != len(references) or not hypotheses:
        raise DataError(f"need one reference list per caption, got {len(hypotheses)} captions "
                        f"and {len(references)} reference lists")
    most = max(len(refs) for refs in references)
    # sacreBLEU wants reference streams; None marks an image with fewer references.
    streams = [[refs[k] if k < len(refs) else None for refs in references] for k in range(most)]
    scores, signature = {}, ""
    for order in range(1, 5):
        metric = BLEU(max_ngram_order=order, tokenize="none")
        # sacreBLEU's annotation leaves out the None it reads as "no reference" (metrics/base.py)
        score = metric.corpus_score(list(hypotheses), streams)  # type: ignore[arg-type]
        scores[f"bleu{order}"] = score.score
        signature = str(metric.get_signature())
    return scores, signature


def cell_coverage(box: Sequence[float], grid: tuple[int, int], size: int) -> np.ndarray:
    """(h, w): the share of each annotation cell of a size x size image inside box
    (x0, y0, x1, y1); cell (r, c) covers [c, c+1) * size / w by [r, r+1) * size / h."""
    def overlap(low: float, high: float, cells: int) -> np.ndarray:
        edges = np.linspace(0.0, size, cells + 1)
        inside = np.minimum(high, edges[1:]) - np.maximum(low, edges[:-1])
        return np.clip(inside, 0.0, None) / (size / cells)

    x0, y0, x1, y1 = box
    return np.outer(overlap(y0, y1, grid[0]), overlap(x0, x1, grid[1]))


@dataclass
class Localisation:
    """Sums over scored words (a matched mention's colour and shape word): inside = attention
    mass inside the named object's box; chance = that box's share of the image; mentions /
    unmatched count "<colour> <shape>" pairs, and those naming no object of the image."""

    inside: float = 0.0
    chance: float = 0.0
    words: int = 0
    mentions: int = 0
    unmatched: int = 0

    def __add__(self, other: Localisation) -> Localisation:
        return Localisation(*(a + b for a, b in zip(vars(self).values(), vars(other).values(),
                                                     strict=True)))

    @property
    def score(self) -> float:
        """Mean share of attention inside the named object's box (0-1)."""
        return self.inside / max(self.words, 1)

    @property
    def chance_level(self) -> float:
        """Mean share of the image those boxes cover: what uniform attention would score."""
        return self.chance / max(self.words, 1)


def localise(words: list[str], attention: np.ndarray, boxes: list[ObjectBox], size: int, *,
             colours=COLOURS, shapes=SHAPES) -> Localisation:
    """Localisation of one caption. attention (T, h, w): alpha_t for words[t] (T >= len(words));
    boxes: the image's objects left to right, in the size x size image's pixels.

    The k-th mention is matched to the k-th object when its colour and shape agree, otherwise
    to the image's first object of that colour and shape; a mention of neither is unmatched.
    """
    attention = np.asarray(attention, dtype=float)
    result = Localisation()
    for t in range(len(words) - 1):
        if words[t] not in colours or words[t + 1] not in shapes:
            continue
        named = (words[t], words[t + 1])
        candidates = [b for b in boxes if (b.colour, b.shape) == named]
        if result.mentions < len(boxes) and (boxes[result.mentions].colour,
                                             boxes[result.mentions].shape) == named:
            candidates.insert(0, boxes[result.mentions])
        result.mentions += 1
        if not candidates:
            result.unmatched += 1
            continue
        coverage = cell_coverage(candidates[0].box, attention.shape[1:], size)
        for step in (t, t + 1):  # the colour word and the shape word
            result.inside += float((attention[step] * coverage).sum())
            result.chance += float(coverage.mean())
            result.words += 1
    return result


def caption_metrics(hypotheses: list[list[str]], attention: list[np.ndarray],
                    references: list[list[list[str]]], boxes: list[list[ObjectBox]],
                    size: int) -> tuple[dict[str, float], str]:
    """BLEU-1..4 and, when any image has boxes, localisation and its chance level (percent),
    the share of mentions that named no object, and the number of words scored.
    Returns (metrics, BLEU signature)."""
    texts = [" ".join(words) for words in hypotheses]
    metrics, signature = caption_bleu(texts, [[" ".join(r) for r in refs] for refs in references])
    if any(boxes):
        total = Localisation()
        for words, alpha, image_boxes in zip(hypotheses, attention, boxes, strict=True):
            total = total + localise(words, alpha, image_boxes, size)
        metrics["localisation"] = 100.0 * total.score
        metrics["localisation_chance"] = 100.0 * total.chance_level
        metrics["unmatched_mentions"] = 100.0 * total.unmatched / max(total.mentions, 1)
        metrics["localised_words"] = float(total.words)  # 0: nothing scored, both are 0
    return metrics, signature
