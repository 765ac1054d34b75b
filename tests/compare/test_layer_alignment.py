"""The explanation page's "AER per layer" (compare/report/layer_alignment.py, stats/layers.py) on
hand-made records whose best layer and head are set by construction: the table, the best head
of each seed and whether the seeds agree, and the sentence naming the best reading, which
follows the data."""

import re

import numpy as np

from attnlab.compare.report.explanations import PAGES, SOURCE_CLAIMS, aer_rows
from attnlab.compare.report.layer_alignment import best_lines, layer_rows, seed_rows
from attnlab.compare.stats.explanations import claim_tests, reading_names
from attnlab.compare.stats.layers import aer_across_seeds, best_heads, places

from .test_explain_suite import N, member

KINDS = ("attention", "attention >= 0.3", "attention, row t+1", "attention x value norm")
CELL = r"0\.\d{3} \(0\.\d{3} to [01]\.\d{3}\)"
EFLOMAL = {"label": "eflomal", "aer": 0.21, "pairs": 500}


def counts(right: int, rng: np.random.Generator) -> list[list[int]]:
    """Per pair (|A&S|, |A&P|, |A|, |S|) with `right` of 4 links right, give or take one."""
    hits = np.clip(right + rng.integers(-1, 2, N), 0, 4)
    return [[int(h), int(h), 4, 4] for h in hits]


def transformer(seeds=3, best=(2, 1), best_in_seed=None, layers=2, heads=2):
    """A member whose every layer reading has 1 of 4 links right, and whose head `best`
    ((layer, head)) has 3 under the shifted reading; in seed `best_in_seed` ((seed, (layer,
    head))), another head takes its place."""
    found = member("transformer", seeds=seeds, attention_links=2, diagonal_links=1,
                   top_flips=0.5, random_flips=0.05, tau=0.4)
    for seed, record in enumerate(found.records, start=1):
        rng = np.random.default_rng(7 * seed)
        extractions = record["extractions"]
        extractions["layers"] = {}
        winner = best_in_seed[1] if best_in_seed and best_in_seed[0] == seed else best
        for layer in range(1, layers + 1):
            for head in (None, *range(1, heads + 1)):
                view = f"L{layer}" + ("" if head is None else f"H{head}")
                for kind in KINDS:
                    name = f"{kind} @ {view}"
                    right = 3 if kind == "attention, row t+1" and (layer, head) == winner else 1
                    extractions["counts"][name] = counts(right, rng)
                    extractions["layers"][name] = {"reading": kind, "layer": layer,
                                                   "head": head}
    return found


def recurrent():
    found = member("rnn", attention_links=2, diagonal_links=1, top_flips=0.5,
                   random_flips=0.05, tau=0.4)
    for seed, record in enumerate(found.records, start=1):
        rng = np.random.default_rng(50 + seed)
        for kind in KINDS[1:]:
            record["extractions"]["counts"][kind] = counts(2, rng)
    return found


def test_the_table_has_a_row_per_layer_the_best_head_and_the_others_beside():
    members = [transformer(), recurrent()]
    rows = layer_rows(members, EFLOMAL)
    assert rows[0] == ["member", "layer", "seeds", "argmax", "threshold (>= 0.3)",
                       "shifted (row t+1)", "norm-based"]
    labels = [(row[0], row[1]) for row in rows[1:]]
    assert labels == [("Transformer", "1"), ("Transformer", "2"), ("Transformer", "best head"),
                      ("Rnn", "attention"), ("diagonal aligner", "-"), ("eflomal", "-")]
    assert all(re.fullmatch(CELL, cell) for row in rows[1:4] for cell in row[3:4] + row[4:7]
               if not cell.startswith("L")), rows
    assert rows[3][5].startswith("L2H1: ") and re.fullmatch(CELL, rows[3][5][6:])
    # the shifted head has 3 of 4 links right: AER about 0.25, far below a layer's 0.75
    assert float(rows[3][5][6:11]) < 0.3 < 0.7 < float(rows[1][5][:5])
    assert rows[-1][3] == "0.210" and rows[-1][4:] == ["-"] * 3
    assert rows[4][2] == "3" and all(re.fullmatch(CELL, cell) for cell in rows[4][3:])
    # the per-reading table and its tests leave the layer readings to this one
    assert not any(" @ " in name for name in reading_names(members))
    assert not any(" @ " in cell for cell in aer_rows(members)[0])
    assert layer_rows([recurrent()], EFLOMAL) == [] and seed_rows([recurrent()]) == []


def test_one_seed_gives_the_mean_without_an_interval():
    rows = layer_rows([transformer(seeds=1)], None)
    assert rows[1][3].endswith("(< 3 seeds)") and rows[-1][0] == "diagonal aligner"
    assert seed_rows([transformer(seeds=1)])[1][-1] == "one seed"


def test_the_interval_is_the_seeds_mean_aer_with_its_noise():
    found = transformer()
    stats = np.stack([np.asarray(r["extractions"]["counts"]["attention @ L1"], dtype=float)
                      for r in found.records])
    comparison = aer_across_seeds(stats)
    per_seed = 1 - (stats[..., 0] + stats[..., 1]).sum(1) / (stats[..., 2] + stats[..., 3]).sum(1)
    assert np.isclose(comparison.mean_a, per_seed.mean()) and comparison.df == 2
    low, high = comparison.interval()
    assert low < per_seed.mean() < high


def test_the_best_head_of_each_seed_and_whether_they_agree_follow_the_data():
    same = transformer()
    assert [best.view for best in best_heads(same, "attention, row t+1")] == ["L2H1"] * 3
    rows = {row[1]: row for row in seed_rows([same])[1:]}
    assert rows["shifted (row t+1)"][-1] == "yes: L2H1"
    assert rows["shifted (row t+1)"][2].startswith("L2H1 0.2")
    said = best_lines([same])
    assert len(said) == 1 and "the best reading is shifted (row t+1) of head L2H1" in said[0]
    assert "the same head, L2H1, in every seed" in said[0]

    split = transformer(best_in_seed=(3, (1, 2)))
    rows = {row[1]: row for row in seed_rows([split])[1:]}
    assert rows["shifted (row t+1)"][-1] == "no: L2H1 in seeds 1, 2; L1H2 in seed 3"
    changed = best_lines([split])[0]
    assert changed != said[0] and "not the same in every seed" in changed

    moved = transformer(best=(1, 2))
    assert "of head L1H2" in best_lines([moved])[0]
    assert places(moved)["attention @ L1H2"] == {"reading": "attention", "layer": 1, "head": 2}


def test_both_pages_render_the_layer_tables():
    members = [transformer(), recurrent()]
    claim_tests(members, SOURCE_CLAIMS)
    page = PAGES["source"]
    markdown = "\n".join(page.markdown(members, EFLOMAL, "attnlab compare eras"))
    assert "AER per layer and the best head, across seeds (lower is better):" in markdown
    assert "| Transformer | best head | 3 |" in markdown
    assert "The best layer and head of each seed:" in markdown
    assert "yes: L2H1" in markdown and "the best reading is shifted (row t+1)" in markdown
    html = page.html(members, EFLOMAL, "attnlab compare eras")
    assert "<h3>AER per layer and the best head, across seeds (lower is better)</h3>" in html
    assert "L2H1: 0.2" in html and "yes: L2H1" in html
    assert "AER per layer" not in "\n".join(page.markdown([recurrent()], EFLOMAL, "x"))
