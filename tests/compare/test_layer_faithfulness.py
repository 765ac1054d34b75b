"""The "faithfulness per layer" table (attnlab.compare.report.layer_faithfulness) on hand-made
records whose figures are known: a Transformer member's layers beside a recurrent member's one
layer, mean ± sd over the seeds, and no table where no member has a second layer."""

from __future__ import annotations

from attnlab.compare.report.layer_faithfulness import (
    HEADING,
    layer_block,
    layer_faithfulness,
    layer_rows,
)
from attnlab.compare.stats.explanations import Explained


def summary(top: int, tvd: float, tau: float | None) -> dict:
    """Two sentences of 5 steps each, `top` flips each erasing the top attended (1 the random
    other), permutation TVDs tvd and tvd + 0.2 (and one sentence with none)."""
    return {"steps": [5, 5, 0], "flips": {"top_attention": [top, top, 0], "random": [1, 0, 0]},
            "permutation_tvd": [tvd, tvd + 0.2, None], "agreement": {"gradient": [tau, None, None]}}


def transformer(layers_per_seed: list[list[dict]]) -> Explained:
    records = [{"faithfulness": layers[-1], "faithfulness_layers": layers}
               for layers in layers_per_seed]
    return Explained("transformer", "Transformer", records, [{}] * len(records))


def rnn() -> Explained:
    return Explained("bahdanau", "Bahdanau", [{"faithfulness": summary(4, 0.3, 0.5)}], [{}])


def test_each_layer_is_a_row_with_its_seeds_mean_and_sd():
    members = [transformer([[summary(1, 0.1, 0.2), summary(3, 0.4, None)],
                            [summary(2, 0.1, 0.4), summary(5, 0.6, None)]]), rnn()]
    rows = layer_rows(members)
    header = rows[0]
    assert header[:3] == ["member", "layer", "seeds"]
    column = {name: header.index(name) for name in header}
    first, last, recurrent = rows[1:]
    assert first[:3] == ["Transformer", "1", "2"] and last[:3] == ["Transformer", "2 (read)", "2"]
    # flips: (2 + 2) / 10 and (4 + 4) / 10 over the two seeds of layer 1
    assert first[column["flips: top attended %"]] == "30.0 ± 14.1"
    assert last[column["flips: top attended %"]] == "80.0 ± 28.3"
    assert first[column["flips: random other %"]] == "10.0 ± 0.0"
    assert first[column["permutation TVD"]] == "0.200 ± 0.000"   # means 0.2 and 0.2
    assert last[column["permutation TVD"]] == "0.600 ± 0.141"    # means 0.5 and 0.7
    assert first[column["tau: gradient x input"]] == "0.300 ± 0.141"
    assert last[column["tau: gradient x input"]] == "-"            # no sentence has one
    assert last[column["adversarial JSD"]] == "-"                  # not run
    assert recurrent[:3] == ["Bahdanau", "1", "1"]                 # its one layer
    assert recurrent[column["flips: top attended %"]] == "80.0"


def test_html_and_markdown_carry_the_same_table_and_nothing_without_layers():
    members = [transformer([[summary(1, 0.1, 0.2), summary(3, 0.4, None)]]), rnn()]
    page, text = layer_faithfulness(members)
    assert HEADING in page and "<table>" in page and "2 (read)" in page
    assert text.startswith(f"{HEADING}:") and "| Transformer | 2 (read) | 1 |" in text
    assert layer_block([rnn()]) == [] and layer_faithfulness([rnn()]) == ("", "")
