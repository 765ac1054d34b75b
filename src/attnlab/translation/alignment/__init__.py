"""Word alignment, in one place: links and their Pharaoh files (links), gold sets and which of
them a run is scored on (golds), AER and its counts (aer), links from attention and the AER of a
run's attention (from_attention), forced decoding (forced), the statistical aligner baseline
(aligner), and the links of a whole corpus that guided alignment trains towards (corpus_links).

A link is (source index, target index), 0-based, everywhere. Alignment is translation's: its gold
sets are the RWTH German-English gold and the dates task's character gold.
"""

from .aer import AlignmentScore, aer, aer_counts, aer_from_counts
from .aligner import METHODS, aligner_aer, eflomal_links, symmetrise
from .corpus_links import Aligned, align_corpus, read_corpus_links, sidecar
from .forced import ForcedAlignment, forced_alignment
from .from_attention import (
    alignment_from_attention,
    alignment_weights,
    argmax_links,
    attention_units,
    diagonal_links,
    score_alignments,
)
from .golds import (
    RWTH_FILES,
    GoldChoice,
    GoldSet,
    choose_golds,
    dates_gold,
    dates_gold_path,
    environment_rwth_dir,
    gold_from_file,
    rwth_gold,
    rwth_gold_for_run,
    scored_on_rwth,
)
from .links import AlignmentSet, Link, links_line, read_links
from .protocol import AlignableRun

__all__ = [
    "METHODS", "RWTH_FILES", "AlignableRun", "Aligned", "AlignmentScore", "AlignmentSet",
    "ForcedAlignment", "GoldChoice", "GoldSet", "Link", "aer", "aer_counts", "aer_from_counts",
    "align_corpus", "aligner_aer", "alignment_from_attention", "alignment_weights",
    "argmax_links", "attention_units", "choose_golds", "dates_gold", "dates_gold_path",
    "diagonal_links", "eflomal_links", "environment_rwth_dir", "forced_alignment",
    "gold_from_file", "links_line", "read_corpus_links", "read_links",
    "rwth_gold", "rwth_gold_for_run", "score_alignments", "scored_on_rwth", "sidecar",
    "symmetrise",
]
