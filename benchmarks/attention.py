"""Time the attention family side by side, in one run, and print one markdown table.

1. Every global score at B=64, Tk=30, d=512: one decoder step (Tq=1, keys projected once per
   sentence, outside the timed call, as a decoder does) and a whole target (Tq=30, projection
   included).
2. `scaled_dot` against torch's fused scaled_dot_product_attention on the same inputs (ratio).
3. Global vs local-p attention (general score, D=10) for Tq = Tk = 256, 1024, 4096 at d=256.
4. Issue 14: local-p and local-m (general score, D=8) against global attention at B=1, d=256,
   n = 1024 and 4096 source positions, a decoder's whole target of Tq = n/2 queries in one call:
   times, local/global ratio, growth 1024 -> 4096, GFLOP/s against this machine's fp32 GEMM
   rate, and the same figures for the implementation before issue 14 (`old_local`), all
   interleaved in one run.
5. Local attention at Multi30k's size (B=64, 20 source positions, D=10): a decoder step and a
   whole target, global beside local-m and local-p by either route: the whole source scored and
   masked to the window (what a source of at most three windows takes) or window by window.
6. torch.tanh against attention.ops.fast_tanh (2 sigmoid(2x) - 1) at the shapes attnlab calls it
   at; 10x the repeats of the other sections (each call is short).
7. Issue 25, through the model: a local-p decoder step (B=16) and a teacher-forced decoder
   forward (T = n/2) over n = 1024 and 4096 source positions against global attention, with
   local-p's weights kept as windows and, as before issue 25, dense (attention_decoder.py).

Forward passes under torch.no_grad(); medians over repeated calls. Beside each time of sections
1-3 and 5: the achieved GFLOP/s (the matrix-product FLOPs of the same call, counted once by
torch.utils.flop_counter, over the median time) and its share of this machine's fp32 GEMM rate
(common.gemm_rate: torch.mm 1024^3 at the same thread count, measured at the start of the run
and printed in the header). Section 4 counts FLOPs by the formulas in `local_window` and measures
the GEMM rate once per round, between its timings. Usage:
    python benchmarks/attention.py [--threads 1] [--repeats 50] [--only SECTION]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from attention_decoder import decoder_rows
from attnlab.attention import SCORES, Attention, LocalAttention
from attnlab.attention.core import masked_softmax
from attnlab.attention.ops import fast_tanh, gather_rows
from common import gemm_rate, matmul_flops, whole_number


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


def speed(flops: int, seconds: float, rate: float) -> str:
    """Achieved GFLOP/s and its share of the GEMM rate `rate` (GFLOP/s), e.g. "3.1 (4%)"."""
    achieved = flops / seconds / 1e9
    return f"{achieved:.1f} ({achieved / rate:.0%})"


def timed(fn: Callable, *args, repeats: int, rate: float, warmup: int = 3,
          **kwargs) -> tuple[float, str]:
    """Median seconds of fn(*args, **kwargs) and its speed(), from the FLOPs of one more call."""
    seconds = median_seconds(fn, *args, repeats=repeats, warmup=warmup, **kwargs)
    return seconds, speed(matmul_flops(functools.partial(fn, *args, **kwargs)), seconds, rate)


def global_scores(repeats: int, rate: float) -> list[str]:
    batch, num_keys, dim = 64, 30, 512
    keys, values = torch.randn(batch, num_keys, dim), torch.randn(batch, num_keys, dim)
    mask = torch.ones(batch, num_keys, dtype=torch.bool)
    mask[::2, 20:] = False  # half the sentences are padded: the mask is really applied
    rows = ["| score | step (Tq=1) | GFLOP/s (share of GEMM) | whole target (Tq=30) | GFLOP/s "
            "(share of GEMM) |", "|---|---|---|---|---|"]
    for name in sorted(SCORES):
        if name == "concat":
            continue  # the same function as additive
        attention = Attention(name, query_dim=dim, key_dim=dim, max_len=num_keys)
        projected = attention.project_keys(keys)
        step_query, target_query = torch.randn(batch, dim), torch.randn(batch, 30, dim)
        step, step_speed = timed(attention, step_query, keys, values, mask,
                                 projected_keys=projected, repeats=repeats, rate=rate)
        target, target_speed = timed(attention, target_query, keys, values, mask,
                                     repeats=repeats, rate=rate)
        label = "additive (= concat)" if name == "additive" else name
        rows.append(f"| {label} | {fmt(step)} | {step_speed} | {fmt(target)} | "
                    f"{target_speed} |")
    return rows


def against_sdpa(repeats: int, rate: float) -> list[str]:
    batch, num_keys, dim = 64, 30, 512
    attention = Attention("scaled_dot", query_dim=dim, key_dim=dim)
    keys, values = torch.randn(batch, num_keys, dim), torch.randn(batch, num_keys, dim)
    mask = torch.ones(batch, num_keys, dtype=torch.bool)
    mask[::2, 20:] = False
    rows = ["| B=64, Tk=30, d=512 | attnlab scaled_dot | GFLOP/s (share of GEMM) | torch SDPA | "
            "GFLOP/s (share of GEMM) | ratio |", "|---|---|---|---|---|---|"]
    for queries in (1, 30):
        query = torch.randn(batch, queries, dim)
        ours, our_speed = timed(attention, query, keys, values, mask, repeats=repeats,
                                rate=rate)
        sdpa_mask = mask.unsqueeze(1)  # (B, 1, Tk), True = take part, as in attnlab
        theirs, their_speed = timed(F.scaled_dot_product_attention, query, keys, values,
                                    attn_mask=sdpa_mask, repeats=repeats, rate=rate)
        rows.append(f"| Tq={queries} | {fmt(ours)} | {our_speed} | {fmt(theirs)} | "
                    f"{their_speed} | {ours / theirs:.2f}x |")
    return rows


def global_vs_local(repeats: int, rate: float) -> list[str]:
    batch, dim, window = 4, 256, 10
    rows = ["| Tq = Tk (B=4, d=256) | global (general) | GFLOP/s (share of GEMM) | local-p "
            "(general, D=10) | GFLOP/s (share of GEMM) | speed-up |", "|---|---|---|---|---|---|"]
    for length in (256, 1024, 4096):
        query, keys = torch.randn(batch, length, dim), torch.randn(batch, length, dim)
        mask = torch.ones(batch, length, dtype=torch.bool)
        full = Attention("general", query_dim=dim, key_dim=dim)
        local = LocalAttention("general", window=window, predictive=True, query_dim=dim,
                               key_dim=dim)
        n = max(3, repeats // (length // 256))
        t_global, global_speed = timed(full, query, keys, mask=mask, repeats=n, rate=rate,
                                       warmup=1)
        t_local, local_speed = timed(local, query, keys, mask=mask, repeats=n, rate=rate,
                                     warmup=1)
        rows.append(f"| {length} | {fmt(t_global)} | {global_speed} | {fmt(t_local)} | "
                    f"{local_speed} | {t_global / t_local:.1f}x |")
    return rows


def short_sources(repeats: int, rate: float) -> list[str]:
    """A decoder step and a whole target at Multi30k's size: B=64, 20 source positions (some
    padded), d=256, D=10: global, and local-m / local-p by either route (`dense_up_to` chooses
    between scoring the whole source masked to the window and reading the windows)."""
    batch, length, dim, window = 64, 20, 256, 10
    keys, step, target = (torch.randn(batch, length, dim), torch.randn(batch, dim),
                          torch.randn(batch, 25, dim))
    mask = torch.ones(batch, length, dtype=torch.bool)
    mask[::2, 15:] = False
    full = Attention("general", query_dim=dim, key_dim=dim)
    projected = full.project_keys(keys)  # once per sentence, as a decoder does
    mechanisms = {"global": (full, None)}
    for predictive, kind in ((False, "local-m"), (True, "local-p")):
        for route, dense_up_to in (("whole source, masked", 10**9), ("windows", 0)):
            local = LocalAttention(full.score, window=window, predictive=predictive)
            mechanisms[f"{kind}, {route}"] = (local, dense_up_to)
    rows = ["| B=64, 20 positions, d=256, D=10 | decoder step | GFLOP/s (share of GEMM) | "
            "whole target (Tq=25) | GFLOP/s (share of GEMM) |", "|---|---|---|---|---|"]
    for name, (mechanism, dense_up_to) in mechanisms.items():
        if dense_up_to is not None:
            mechanism.dense_up_to = dense_up_to
        t_step, step_speed = timed(mechanism, step, keys, mask=mask, projected_keys=projected,
                                   repeats=repeats, rate=rate)
        t_all, all_speed = timed(mechanism, target, keys, mask=mask, projected_keys=projected,
                                 repeats=max(3, repeats // 5), rate=rate)
        rows.append(f"| {name} | {fmt(t_step)} | {step_speed} | {fmt(t_all)} | {all_speed} |")
    rows.append("\nThe window route's own kernels (sampled_addmm, embedding_bag) are not "
                "counted by torch's FLOP counter: its GFLOP/s are the dense products only.")
    return rows


def old_local(local: LocalAttention, query: torch.Tensor, keys: torch.Tensor,
              mask: torch.Tensor, chunk_elements: int = 1 << 22) -> tuple[torch.Tensor, ...]:
    """Local attention as it was before issue 14, values = keys: gather (B, chunk, W, H) window
    keys and values, batched tiny matmuls, torch.tanh -> context, dense weights."""
    score, window = local.score, local.window
    projected = score.project_keys(keys)
    batch, queries, num_keys = query.shape[0], query.shape[1], keys.shape[1]
    if local.predictive:
        gate = torch.sigmoid(local.position_v(torch.tanh(local.position_proj(query))))
        centres = (mask.sum(-1, keepdim=True) - 1).clamp(min=0).to(query.dtype) * gate.squeeze(-1)
    else:
        centres = torch.arange(queries, dtype=query.dtype).expand(batch, queries)
    slots = torch.arange(-window, window + 1)
    positions = centres.round().long().unsqueeze(-1) + slots
    clamped = positions.clamp(0, num_keys - 1)
    valid = (positions >= 0) & (positions < num_keys)
    valid &= mask.unsqueeze(1).expand(batch, queries, num_keys).gather(-1, clamped)
    chunk = max(1, chunk_elements // (batch * slots.numel() * projected.shape[-1]))
    contexts, weights = [], []
    for s in range(0, queries, chunk):
        part, where = clamped[:, s : s + chunk], centres[:, s : s + chunk]
        w = masked_softmax(score.window(query[:, s : s + chunk], projected, part),
                           valid[:, s : s + chunk])
        if local.predictive:
            w = w * torch.exp(-((part - where.unsqueeze(-1)) ** 2) / (2 * (window / 2) ** 2))
        contexts.append((w.unsqueeze(-2) @ gather_rows(keys, part)).squeeze(-2))
        weights.append(w)
    w = torch.cat(weights, dim=1)
    dense = w.new_zeros(batch, queries, num_keys).scatter_add_(-1, clamped, w)
    return torch.cat(contexts, dim=1), dense


def window_variants(length: int, dim: int, window: int) -> dict[str, Callable]:
    """The calls issue 14 times at n = length source positions, Tq = n/2 queries."""
    queries = length // 2
    query, keys = torch.randn(1, queries, dim), torch.randn(1, length, dim)
    mask = torch.ones(1, length, dtype=torch.bool)
    lengths = mask.sum(-1, keepdim=True)
    full = Attention("general", query_dim=dim, key_dim=dim)
    local_p = LocalAttention(full.score, window=window, predictive=True)
    local_m = LocalAttention(full.score, window=window, predictive=False)
    return {
        "global": lambda: full(query, keys, mask=mask),
        "local-p": lambda: local_p(query, keys, mask=mask),
        "local-m": lambda: local_m(query, keys, mask=mask),
        "local-p window form": lambda: local_p.attend_window(query, keys, mask=mask),
        "local-m window form": lambda: local_m.attend_window(query, keys, mask=mask),
        "local-p before": lambda: old_local(local_p, query, keys, mask),
        "local-m before": lambda: old_local(local_m, query, keys, mask),
        "projections (p)": lambda: (full.score.project_keys(keys),
                                    local_p.centres(query, lengths, 0)),
        "projections (m)": lambda: full.score.project_keys(keys),
        "dense weights": lambda: torch.zeros(1, queries, length),
    }


def local_window(repeats: int, rate: float) -> list[str]:
    """Issue 14's case; every variant is timed once per round, rounds interleave, medians. The
    GEMM rate is measured in every round too (the other jobs on the machine vary), and its
    median replaces the run's `rate`."""
    dim, window, rounds = 256, 8, max(5, repeats // 7)
    width = 2 * window + 1
    found: dict[int, dict[str, float]] = {}  # median over rounds
    best: dict[int, dict[str, float]] = {}  # fastest round: less of the other jobs' noise
    peak: list[float] = []
    for length in (1024, 4096):
        variants = window_variants(length, dim, window)
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(rounds):
            peak.append(gemm_rate())
            for name, call in variants.items():
                times[name].append(median_seconds(call, repeats=3, warmup=1))
        found[length] = {name: statistics.median(t) for name, t in times.items()}
        best[length] = {name: min(t) for name, t in times.items()}
    rate = statistics.median(peak)
    # FLOPs: key projection n d^2, position net Tq d^2, scores and context 2 * Tq * (n or W) * d.
    flops = {
        "global": lambda n, tq: 2 * (n * dim * dim + 2 * tq * n * dim),
        "local-p": lambda n, tq: 2 * (n * dim * dim + tq * dim * dim + 2 * tq * width * dim),
        "local-m": lambda n, tq: 2 * (n * dim * dim + 2 * tq * width * dim),
    }
    flops["local-p window form"] = flops["local-p before"] = flops["local-p"]
    flops["local-m window form"] = flops["local-m before"] = flops["local-m"]
    rows = [f"B=1, d=256, D={window} (W={width}), general score, Tq = n/2 queries per call; "
            f"fp32 GEMM rate (torch.mm 1024^3) in this section's rounds {rate:.1f} GFLOP/s\n",
            "| variant | n=1024 | n=4096 | growth | / global at 4096 | GFLOP/s at 4096 "
            "(share of GEMM) |", "|---|---|---|---|---|---|"]
    for name in variants:
        small, large = found[1024][name], found[4096][name]
        ratio = f"{found[4096]['global'] / large:.1f}x faster" if name in flops else ""
        achieved = speed(flops[name](4096, 2048), large, rate) if name in flops else ""
        rows.append(f"| {name} | {fmt(small)} | {fmt(large)} | {large / small:.2f}x | "
                    f"{ratio} | {achieved} |")
    for label, figures in (("median", found), ("fastest round", best)):
        small, large = figures[1024], figures[4096]
        rows.append(f"\n{label}: " + "; ".join(
            f"{name} {large['global'] / large[name]:.1f}x faster than global at 4096, growth "
            f"{large[name] / small[name]:.2f}x"
            for name in ("local-p", "local-m", "local-p window form", "local-m window form")))
        for kind in ("p", "m"):
            shared, windowed = large[f"projections ({kind})"], large[f"local-{kind} window form"]
            rows.append(f"{label}, local-{kind} at 4096: shared projections {fmt(shared)}; "
                        f"window work (window form - projections) {fmt(windowed - shared)} = "
                        f"{(windowed - shared) / shared:.0%} of them; dense (Tq, n) weights "
                        f"(forward - window form) {fmt(large[f'local-{kind}'] - windowed)}")
    return rows


TANH_SHAPES = {  # where attnlab calls tanh through sigmoid
    (64, 30, 512): "local-p's tanh(W_p h_t), a whole target (B, Tq, d)",
    (64, 512): "local-p's tanh(W_p h_t), one decoder step (B, d)",
    (64, 256): "one decoder step at d=256 (B, d)",
    (64, 20, 256): "the additive score / LSTMN's tanh(P + q), (B, Tk, H)",
}


def tanh_forms(repeats: int, rate: float) -> list[str]:
    """torch.tanh against fast_tanh (2 sigmoid(2x) - 1) at the shapes attnlab calls it at."""
    rows = ["| shape | where | torch.tanh | fast_tanh | torch.tanh / fast_tanh |",
            "|---|---|---|---|---|"]
    for shape, where in TANH_SHAPES.items():
        x = torch.randn(shape)
        exact = median_seconds(torch.tanh, x, repeats=10 * repeats)
        fast = median_seconds(fast_tanh, x, repeats=10 * repeats)
        rows.append(f"| {tuple(shape)} | {where} | {fmt(exact)} | {fmt(fast)} | "
                    f"{exact / fast:.1f}x |")
    return rows


SECTIONS = {
    "scores": ("Global scores", global_scores),
    "sdpa": ("scaled_dot vs torch.nn.functional.scaled_dot_product_attention", against_sdpa),
    "global-local": ("Global vs local-p", global_vs_local),
    "short": ("Local attention on short sources: the two routes", short_sources),
    "local-window": ("Local attention near its FLOP bound (issue 14)", local_window),
    "tanh": ("tanh through sigmoid (attention.ops.fast_tanh)", tanh_forms),
    "decoder": ("Local-p through the decoder (issue 25)",
                lambda repeats, rate: decoder_rows(repeats, rate, fmt)),
}


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=whole_number(1), default=1,
                        help="torch threads (default 1)")
    parser.add_argument("--repeats", type=whole_number(1), default=50,
                        help="timed calls per figure")
    parser.add_argument("--only", choices=sorted(SECTIONS), help="run one section only")
    return parser


def main() -> None:
    args = arguments().parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rate = gemm_rate()
    print(f"attnlab attention benchmark: torch {torch.__version__}, "
          f"{torch.get_num_threads()} thread(s), float32, forward under no_grad, medians; "
          f"fp32 GEMM rate (torch.mm 1024^3) {rate:.1f} GFLOP/s\n")
    with torch.no_grad():
        for key, (title, table) in SECTIONS.items():
            if args.only not in (None, key):
                continue
            print(f"### {title}\n")
            print("\n".join(table(args.repeats, rate)), end="\n\n", flush=True)


if __name__ == "__main__":
    main()
