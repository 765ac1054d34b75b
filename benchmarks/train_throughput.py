"""Training throughput of the reference model (target tokens/s, peak memory), side by side with
JoeyNMT 2.3 on the identical model, in one run.

Variants: attnlab `luong` with input feeding (exactly JoeyNMT's "bahdanau" model), the true
`bahdanau` decoder, and `luong` without input feeding. Each runs in its own process (so its peak
RSS is its own): Multi30k de->en, joint 8k BPE, batches of 64 sentences, Adam 2e-4, clip 1.0,
2 torch threads. Tokens/s is the median over 20-update windows after a warm-up, as the JoeyNMT
script measures it.

Printed per attnlab variant, besides tokens/s and peak RSS: the matrix-product FLOPs of a training
update per target token (torch.utils.flop_counter over the first 5 timed batches, run again
after the timing), the achieved GFLOP/s (that times the median tokens/s) and its share of this
machine's fp32 GEMM rate (common.gemm_rate: torch.mm 1024^3, measured in the variant's process
at its thread count, and printed). JoeyNMT's row has none of these ("-"). Usage:

    python benchmarks/train_throughput.py [--updates 200] [--no-joeynmt]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

VARIANTS = {
    "luong+feed (= JoeyNMT model)": ("luong", True),
    "bahdanau": ("bahdanau", True),
    "luong, no input feeding": ("luong", False),
}
WINDOW = 20
FLOP_UPDATES = 5  # timed batches whose updates are counted again under the FLOP counter


def measure(decoder: str, input_feeding: bool, updates: int, threads: int) -> dict:
    """Train `updates` steps in this process; median tokens/s over 20-update windows, the
    matrix-product FLOPs per target token of an update and this process's fp32 GEMM rate."""
    import torch

    from attnlab.data import BucketBatchSampler, collate
    from attnlab.models import build_model
    from attnlab.translation.corpus import encode_corpus, read_split
    from common import (
        gemm_rate,
        matmul_flops,
        multi30k_config,
        multi30k_vocabularies,
        reference_model,
    )

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    data = multi30k_config()
    vocabs = multi30k_vocabularies(data)
    corpus = encode_corpus(read_split(data, "train"), vocabs, 100)
    model = build_model(reference_model(decoder, input_feeding), len(vocabs.src), len(vocabs.tgt))
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4, fused=True)  # as attnlab train
    sampler = BucketBatchSampler([(len(s) + 1, len(t) + 1) for s, t in corpus.pairs], 64,
                                 shuffle=True, seed=1)
    batches = iter(sampler)

    def update(batch) -> None:
        out = model(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_mask)  # as the task
        loss = model.loss(out, batch.tgt_out, batch.tgt_mask).loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    rates, tokens, start, counted = [], 0, time.perf_counter(), []
    for step in range(1, updates + 1):
        batch = collate([corpus.pairs[i] for i in next(batches)])
        update(batch)
        tokens += batch.num_target_tokens
        if WINDOW < step <= WINDOW + FLOP_UPDATES:
            counted.append(batch)
        if step % WINDOW == 0:
            now = time.perf_counter()
            if step > WINDOW:  # the first window warms up allocator and caches
                rates.append(tokens / (now - start))
            tokens, start = 0, now
    params = sum(p.numel() for p in model.parameters())
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def counted_updates() -> None:  # run after the timing: the counter slows every op
        for batch in counted:
            update(batch)

    flops_per_token = (matmul_flops(counted_updates)
                       / sum(batch.num_target_tokens for batch in counted))
    return {"tokens_per_s": statistics.median(rates), "min": min(rates), "max": max(rates),
            "peak_rss_mib": peak_mib, "parameters": params, "flops_per_token": flops_per_token,
            "gemm_rate": gemm_rate()}


def run_variant(name: str, updates: int, threads: int) -> dict:
    command = [sys.executable, __file__, "--worker", name, "--updates", str(updates),
               "--threads", str(threads)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_joeynmt(updates: int) -> dict | None:
    """../shared/peers/joeynmt/run.sh: its median of JoeyNMT's own tokens/s log lines."""
    from common import PEERS

    script = PEERS / "run.sh"
    if not script.is_file():
        print(f"(JoeyNMT peer scripts not found at {PEERS}: skipped)")
        return None
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True,
                            env={**os.environ, "UPDATES": str(updates)})
    found = re.search(r"joeynmt_tokens_per_sec=(\d+)", result.stdout)
    if result.returncode != 0 or not found:
        print(f"(JoeyNMT run failed, exit {result.returncode}: {result.stderr[-500:]})")
        return None
    rss = re.search(r"peak_rss=(\d+) MiB", result.stdout)
    return {"tokens_per_s": float(found.group(1)), "peak_rss_mib": rss and float(rss.group(1))}


def arguments() -> argparse.ArgumentParser:
    from common import whole_number

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=whole_number(1), default=200)
    parser.add_argument("--threads", type=whole_number(1), default=2)
    parser.add_argument("--no-joeynmt", action="store_true", help="skip the peer")
    parser.add_argument("--worker", choices=sorted(VARIANTS), help=argparse.SUPPRESS)
    return parser


def main() -> None:
    args = arguments().parse_args()
    if args.worker:
        print(json.dumps(measure(*VARIANTS[args.worker], args.updates, args.threads)))
        return
    print(f"Training throughput, Multi30k de->en, batch 64 sentences, {args.updates} updates, "
          f"{args.threads} threads; median target tokens/s over {WINDOW}-update windows\n")
    joey = None if args.no_joeynmt else run_joeynmt(args.updates)
    rows = ["| model | target tokens/s (min-max) | GFLOP per token | GFLOP/s (share of GEMM "
            "rate) | fp32 GEMM rate (torch.mm 1024^3) | peak RSS | vs JoeyNMT |",
            "|---|---|---|---|---|---|---|"]
    if joey:
        rss = f"{joey['peak_rss_mib']:,.0f} MiB" if joey["peak_rss_mib"] else "-"
        rows.append(f"| JoeyNMT 2.3 (its 'bahdanau' RNN) | {joey['tokens_per_s']:,.0f} | - | - "
                    f"| - | {rss} | 1.00x |")
    for name in VARIANTS:
        r = run_variant(name, args.updates, args.threads)
        ratio = f"{r['tokens_per_s'] / joey['tokens_per_s']:.2f}x" if joey else "-"
        achieved = r["flops_per_token"] * r["tokens_per_s"] / 1e9
        rows.append(f"| attnlab {name} | {r['tokens_per_s']:,.0f} ({r['min']:,.0f}-"
                    f"{r['max']:,.0f}) | {r['flops_per_token'] / 1e9:.3f} | {achieved:.1f} "
                    f"({achieved / r['gemm_rate']:.0%}) | {r['gemm_rate']:.1f} GFLOP/s | "
                    f"{r['peak_rss_mib']:,.0f} MiB | {ratio} |")
        print(rows[-1], flush=True)
    print("\n" + "\n".join(rows))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
