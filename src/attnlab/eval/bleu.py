"""Corpus BLEU and chrF with sacreBLEU, each reported with its signature.

The signature (e.g. ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``) records every
setting that changes the number, so a score can be compared with another only when the two
signatures match (Post 2018, "A Call for Clarity in Reporting BLEU Scores").
"""

from __future__ import annotations

from dataclasses import dataclass

from sacrebleu.metrics import BLEU, CHRF

from attnlab.errors import DataError


@dataclass(frozen=True)
class Scores:
    """Corpus-level scores, each 0-100, with the sacreBLEU signature that produced it.

    - bleu: sacreBLEU's default BLEU (13a tokenisation, case-sensitive); the number to report.
    - chrf: chrF2 on characters (sacreBLEU default).
    - bleu_lowercase: BLEU with sacreBLEU's 13a tokeniser and lowercasing (`case:lc|tok:13a`).
      Older papers (Bahdanau et al. 2015, Luong et al. 2015) ran multi-bleu.perl on their own
      tokenised text; this is only roughly comparable with those numbers, never identical.
    """

    bleu: float
    bleu_signature: str
    chrf: float
    chrf_signature: str
    bleu_lowercase: float
    bleu_lowercase_signature: str
    sentences: int

    def format(self) -> str:
        """A few aligned, human-readable lines, one per score, each with its signature."""
        rows = [
            ("BLEU", self.bleu, self.bleu_signature),
            ("chrF", self.chrf, self.chrf_signature),
            ("BLEU (13a, lowercased)", self.bleu_lowercase, self.bleu_lowercase_signature),
        ]
        width = max(len(name) for name, _, _ in rows)
        lines = [f"{name:<{width}}  {value:6.2f}  {signature}" for name, value, signature in rows]
        return "\n".join([*lines, f"on {self.sentences} sentences"])


def check_parallel(hypotheses: list[str], references: list[str]) -> None:
    """Raise DataError unless there are as many hypotheses as references, and at least one."""
    if len(hypotheses) != len(references):
        raise DataError(
            f"{len(hypotheses)} hypotheses but {len(references)} references; "
            "each hypothesis needs exactly one reference."
        )
    if not hypotheses:
        raise DataError("no sentences to score: the hypotheses and references are empty.")


def corpus_bleu(hypotheses: list[str], references: list[str], **options) -> tuple[float, str]:
    """sacreBLEU corpus BLEU with one reference per sentence; returns (score, signature).

    options go to sacrebleu.metrics.BLEU (e.g. lowercase=True, tokenize="13a").
    """
    check_parallel(hypotheses, references)
    metric = BLEU(**options)
    score = metric.corpus_score(list(hypotheses), [list(references)])
    return score.score, str(metric.get_signature())


def corpus_chrf(hypotheses: list[str], references: list[str]) -> tuple[float, str]:
    """sacreBLEU corpus chrF2 (default settings); returns (score, signature)."""
    check_parallel(hypotheses, references)
    metric = CHRF()
    score = metric.corpus_score(list(hypotheses), [list(references)])
    return score.score, str(metric.get_signature())


def corpus_scores(hypotheses: list[str], references: list[str]) -> Scores:
    """BLEU, chrF and lowercased 13a BLEU of detokenised hypotheses against one reference each.

    hypotheses, references: one sentence per item, same length, plain text.
    """
    bleu, bleu_signature = corpus_bleu(hypotheses, references)
    chrf, chrf_signature = corpus_chrf(hypotheses, references)
    lower, lower_signature = corpus_bleu(hypotheses, references, lowercase=True, tokenize="13a")
    return Scores(
        bleu=bleu,
        bleu_signature=bleu_signature,
        chrf=chrf,
        chrf_signature=chrf_signature,
        bleu_lowercase=lower,
        bleu_lowercase_signature=lower_signature,
        sentences=len(hypotheses),
    )
