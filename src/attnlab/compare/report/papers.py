"""The papers' own figures, printed beside our measurements in a comparison report.

A `PaperTable` is one table of one paper, with the data and scale it was measured at (always
other data and a larger scale than ours). A figure is here only if it was checked against the
paper's own text. Where no such check was possible, the figure is left out rather than copied
from someone's summary, so a paper may have fewer tables than it printed, or none.

Suite YAML files match a member to a row through `paper_row:`, so row names are short and must
not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast


@dataclass(frozen=True)
class PaperTable:
    """One published table: named rows of numbers (None where the paper gives none)."""

    key: str                   # the paper, a key of PAPERS
    citation: str              # authors, year, title, table number
    setting: str               # the paper's data and scale, in one sentence
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[float | None, ...]], ...]
    note: str = ""

    def __post_init__(self):
        names = [name for name, _ in self.rows]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.citation}: row names repeat: {names}")
        for name, values in self.rows:
            if len(values) != len(self.columns):
                raise ValueError(f"{self.citation}: row {name!r} has {len(values)} values "
                                 f"for {len(self.columns)} columns")

    @property
    def row_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.rows)

    def value(self, row: str, column: str) -> float | None:
        """The figure at (row, column); None if either is absent or the paper gives none."""
        if column not in self.columns:
            return None
        index = self.columns.index(column)
        return next((values[index] for name, values in self.rows if name == row), None)


LUONG_SETTING = ("WMT'14 English->German, 4.5M sentence pairs (116M English, 110M German "
                 "words), 50K-word vocabularies, pairs over 50 words dropped, 4-layer LSTM with "
                 "1000 cells and 1000-d embeddings, tested on newstest2014 (2737 sentences), "
                 "case-sensitive tokenized BLEU (multi-bleu.perl)")

LUONG_TABLE_1 = PaperTable(
    key="luong2015",
    citation="Luong, Pham & Manning 2015, Effective Approaches to Attention-based NMT, Table 1",
    setting=LUONG_SETTING,
    columns=("perplexity", "BLEU"),
    rows=(
        ("base", (10.6, 11.3)),
        ("base + reverse", (9.9, 12.6)),
        ("base + reverse + dropout", (8.1, 14.0)),
        ("+ global (location)", (7.3, 16.8)),
        ("+ global (location) + feed", (6.4, 18.1)),
        ("+ local-p (general) + feed", (5.9, 19.0)),
        ("+ local-p (general) + feed + unk replace", (None, 20.9)),
        ("ensemble of 8 + unk replace", (None, 23.0)),
    ),
    note="Each row adds to the one above; the '+' rows all keep reverse and dropout. "
         "'base + reverse + dropout' is the non-attentional system against which the paper "
         "reports its 5.0 BLEU gain. The paper gives no perplexity for the unk-replace rows.",
)

LUONG_TABLE_4 = PaperTable(
    key="luong2015",
    citation="Luong, Pham & Manning 2015, Effective Approaches to Attention-based NMT, Table 4",
    setting=LUONG_SETTING,
    columns=("perplexity", "BLEU", "BLEU + unk replace"),
    rows=(
        ("global (location)", (6.4, 18.1, 19.3)),
        ("global (dot)", (6.1, 18.6, 20.5)),
        ("global (general)", (6.1, 17.3, 19.1)),
        ("local-m (dot)", (7.0, None, None)),
        ("local-m (general)", (6.2, 18.6, 20.4)),
        ("local-p (dot)", (6.6, 18.0, 19.6)),
        ("local-p (general)", (5.9, 19.0, 20.9)),
    ),
    note="'BLEU' is before unknown-word replacement. The paper prints 'x' for local-m (dot)'s "
         "BLEU. concat is not in the table: its perplexities, from the paper's footnote, are "
         "6.7 (global), 7.1 (local-m) and 7.1 (local-p). global (location) and local-p "
         "(general) carry the same figures as Table 1's '+ feed' rows.",
)

BAHDANAU_TABLE_1 = PaperTable(
    key="bahdanau2015",
    citation="Bahdanau, Cho & Bengio 2015, Neural Machine Translation by Jointly Learning to "
             "Align and Translate, Table 1",
    setting="WMT'14 English->French, parallel corpora cut to 348M words by data selection, "
            "30,000-word shortlists, encoder (bidirectional for RNNsearch) and decoder of 1000 "
            "gated hidden units, beam search, tested on newstest2014 (3003 sentences)",
    columns=("BLEU (all)", "BLEU (no UNK)"),
    rows=(
        ("RNNencdec-30", (13.93, 24.19)),
        ("RNNsearch-30", (21.50, 31.44)),
        ("RNNencdec-50", (17.82, 26.71)),
        ("RNNsearch-50", (26.75, 34.16)),
        ("RNNsearch-50*", (28.45, 36.15)),
        ("Moses", (33.30, 35.63)),
    ),
    note="-30/-50: trained on sentences of up to 30/50 words. RNNsearch-50* was trained until "
         "the development set stopped improving. 'no UNK': only the test sentences with no "
         "unknown word in source or reference, the models barred from emitting [UNK]. Moses is "
         "the phrase-based system, which also uses a 418M-word monolingual corpus.",
)

# cheng2016 (LSTMN, Penn Treebank perplexities) and xu2015 (Show, Attend and Tell, BLEU-1..4 and
# METEOR): no copy of either paper's own tables could be found to check the figures against, so
# no figures are given. The keys stay so that suites naming these papers still load.
PAPERS: dict[str, tuple[PaperTable, ...]] = {
    "luong2015": (LUONG_TABLE_1, LUONG_TABLE_4),
    "bahdanau2015": (BAHDANAU_TABLE_1,),
    "cheng2016": (),
    "xu2015": (),
}


def tables_for(key: str | None) -> tuple[PaperTable, ...]:
    """The paper's tables; empty for None or a key not in PAPERS."""
    return PAPERS.get(key, ()) if key else ()


def paper_aers() -> dict[str, float]:
    """Luong et al. 2015's AER on the same gold (WMT-trained models), when the papers table
    has them."""
    references: dict[str, float] = {}
    for table in tables_for("luong2015"):
        if "AER" not in table.columns:
            continue
        column = table.columns.index("AER")
        for name, values in table.rows:
            if values[column] is not None and ("global" in name or "Berkeley" in name):
                references[f"Luong et al. 2015: {name} (WMT)"] = cast(float, values[column])
    return references
