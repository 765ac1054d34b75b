"""Time the attention family side by side, in one run, and print one markdown table.

1. Every global score at B=64, Tk=30, d=512: one decoder step (Tq=1, keys projected once per
   sentence, outside the timed call, as a decoder does) and a whole target (Tq=30, projection
   included).
2. `scaled_dot` against torch's fused scaled_dot_product_attention on the same inputs (ratio).
3. Global vs local-p attention (general score, D=10) for Tq = Tk = 256, 1024, 4096 at d=256.

Forward passes under torch.no_grad(); medians over repeated calls. Usage:
    python benchmarks/attention.py [--threads 1] [--repeats 50]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from attnlab.attention import SCORES, Attention, LocalAttention


def median_seconds(fn: Callable, *args, repeats: int, warmup: int = 3, **kwargs) -> float:
    """Median wall time of fn(*args, **kwargs)."""
    for _ in range(warmup):
        fn(*args, **kwargs)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fmt(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs" if seconds < 1e-2 else f"{seconds * 1e3:,.1f} ms"


def global_scores(repeats: int) -> list[str]:
    batch, num_keys, dim = 64, 30, 512
    keys, values = torch.randn(batch, num_keys, dim), torch.randn(batch, num_keys, dim)
    mask = torch.ones(batch, num_keys, dtype=torch.bool)
    mask[::2, 20:] = False  # half the sentences are padded: the mask is really applied
    rows = ["| score | step (Tq=1) | whole target (Tq=30) |", "|---|---|---|"]
    for name in sorted(SCORES):
        if name == "concat":
            continue  # the same function as additive
        attention = Attention(name, query_dim=dim, key_dim=dim, max_len=num_keys)
        projected = attention.project_keys(keys)
        step_query, target_query = torch.randn(batch, dim), torch.randn(batch, 30, dim)
        step = median_seconds(attention, step_query, keys, values, mask,
                              projected_keys=projected, repeats=repeats)
        target = median_seconds(attention, target_query, keys, values, mask, repeats=repeats)
        label = "additive (= concat)" if name == "additive" else name
        rows.append(f"| {label} | {fmt(step)} | {fmt(target)} |")
    return rows


def against_sdpa(repeats: int) -> list[str]:
    batch, num_keys, dim = 64, 30, 512
    attention = Attention("scaled_dot", query_dim=dim, key_dim=dim)
    keys, values = torch.randn(batch, num_keys, dim), torch.randn(batch, num_keys, dim)
    mask = torch.ones(batch, num_keys, dtype=torch.bool)
    mask[::2, 20:] = False
    rows = ["| B=64, Tk=30, d=512 | attnlab scaled_dot | torch SDPA | ratio |", "|---|---|---|---|"]
    for queries in (1, 30):
        query = torch.randn(batch, queries, dim)
        ours = median_seconds(attention, query, keys, values, mask, repeats=repeats)
        sdpa_mask = mask.unsqueeze(1)  # (B, 1, Tk), True = take part, as in attnlab
        theirs = median_seconds(F.scaled_dot_product_attention, query, keys, values,
                                attn_mask=sdpa_mask, repeats=repeats)
        rows.append(f"| Tq={queries} | {fmt(ours)} | {fmt(theirs)} | {ours / theirs:.2f}x |")
    return rows


def global_vs_local(repeats: int) -> list[str]:
    batch, dim, window = 4, 256, 10
    rows = ["| Tq = Tk (B=4, d=256) | global (general) | local-p (general, D=10) | speed-up |",
            "|---|---|---|---|"]
    for length in (256, 1024, 4096):
        query, keys = torch.randn(batch, length, dim), torch.randn(batch, length, dim)
        mask = torch.ones(batch, length, dtype=torch.bool)
        full = Attention("general", query_dim=dim, key_dim=dim)
        local = LocalAttention("general", window=window, predictive=True, query_dim=dim,
                               key_dim=dim)
        n = max(3, repeats // (length // 256))
        t_global = median_seconds(full, query, keys, mask=mask, repeats=n, warmup=1)
        t_local = median_seconds(local, query, keys, mask=mask, repeats=n, warmup=1)
        rows.append(f"| {length} | {fmt(t_global)} | {fmt(t_local)} | "
                    f"{t_global / t_local:.1f}x |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--repeats", type=int, default=50, help="timed calls per figure")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"attnlab attention benchmark: torch {torch.__version__}, "
          f"{torch.get_num_threads()} thread(s), float32, forward under no_grad, medians\n")
    with torch.no_grad():
        for title, table in (
            ("Global scores", global_scores),
            ("scaled_dot vs torch.nn.functional.scaled_dot_product_attention", against_sdpa),
            ("Global vs local-p", global_vs_local),
        ):
            print(f"### {title}\n")
            print("\n".join(table(args.repeats)), end="\n\n", flush=True)


if __name__ == "__main__":
    main()
