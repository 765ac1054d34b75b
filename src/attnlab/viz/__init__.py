"""Figures from arrays: attention heatmaps, self-attention reading, BLEU by length, HTML
reports.

viz knows no model: callers pass numpy arrays and token strings, and get files or pixels back.
"""

from attnlab.viz.buckets import bleu_by_length_figure, bleu_by_length_png
from attnlab.viz.fonts import find_cjk_family, font_families, missing_glyphs, register_font
from attnlab.viz.heads_grid import heads_grid_figure
from attnlab.viz.heatmap import (
    alignment_figure,
    alignment_matrix_figure,
    heatmap_scale,
    image_format,
    matrix_figure,
    plot_alignment,
    plot_weight_matrix,
    token_label,
    write_figure,
)
from attnlab.viz.image_attention import image_attention_figure, upsample_attention
from attnlab.viz.panels import panel_grid, row_scaled
from attnlab.viz.report import report_html, write_report
from attnlab.viz.self_attention import (
    SentenceReading,
    plot_reading,
    plot_self_attention,
    self_attention_figure,
)

__all__ = [
    "SentenceReading",
    "plot_reading",
    "alignment_figure",
    "alignment_matrix_figure",
    "bleu_by_length_figure",
    "bleu_by_length_png",
    "find_cjk_family",
    "font_families",
    "heads_grid_figure",
    "heatmap_scale",
    "image_format",
    "image_attention_figure",
    "matrix_figure",
    "missing_glyphs",
    "panel_grid",
    "plot_alignment",
    "plot_self_attention",
    "plot_weight_matrix",
    "register_font",
    "report_html",
    "row_scaled",
    "self_attention_figure",
    "token_label",
    "upsample_attention",
    "write_figure",
    "write_report",
]
