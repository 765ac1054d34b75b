"""Training throughput (target tokens/s, peak memory), side by side with JoeyNMT 2.3 on the
identical model, in one run: JoeyNMT's RNN model or attnlab's Transformer.

`--model rnn` (the default): JoeyNMT's RNN model (benchmarks/common.py reference_model;
../shared/peers/joeynmt/configs/rnn_multi30k_deen.yaml), batches of 64 sentences, Adam 2e-4,
clip 1.0. attnlab variants: `luong` with input feeding (exactly JoeyNMT's "bahdanau" model), the
true `bahdanau` decoder, and `luong` without input feeding.

`--model transformer`: configs/multi30k-transformer.yaml (3+3 layers, d_model 256, 8 heads,
d_ff 512, pre-norm, sinusoidal positions, output layer tied to the target embeddings, dropout
0.1, label smoothing 0.1, batches of 128 sentences, Adam (0.9, 0.98) 7e-4, clip 1.0), and
JoeyNMT's transformer configured to match (benchmarks/peers/joeynmt_transformer.yaml). The
differences that remain, none of them a change of a matrix product's shape:
- parameters: attnlab's tied output layer has a bias (8,000 numbers, 0.1%), JoeyNMT's none;
- dropout: JoeyNMT also drops out the attention weights (every head, 0.1) and the
  feed-forward's inner ReLU activations (0.1), and drops the embeddings after the positions are
  added; attnlab drops the token embeddings before, and the decoder's last features before the
  output layer;
- positions: the same sinusoids, JoeyNMT's from a float32 table, attnlab's computed in float64
  per batch; LayerNorm eps 1e-6 (JoeyNMT) against 1e-5;
- loss: JoeyNMT computes the output layer and log-softmax at every (padded) target position
  and smooths by KL divergence to a dense (positions, V) target with eps / (V - 2) per other
  word; attnlab only at real positions, eps / V as F.cross_entropy. Both average per token;
- initialisation: JoeyNMT xavier_uniform, attnlab torch's defaults (both embeddings
  N(0, 1/256)); the learning-rate schedule is the same (linear warm-up over 1,000 updates,
  then 1/sqrt(step)), which takes no time either way;
- batches: each toolkit's own: attnlab groups sentences of similar length
  (BucketBatchSampler, as `attnlab train`), JoeyNMT samples them at random, so its batches
  carry more padding. The tokens counted are the same: real target tokens with </s>.

Each attnlab variant runs in its own process (so its peak RSS is its own) at --threads torch
threads, JoeyNMT in its venv (made by ../shared/peers/joeynmt/run.sh) at the same
OMP_NUM_THREADS. Tokens/s is the median over 20-update windows (--window), the first (warm-up)
left out on both sides; JoeyNMT's are its own "Tokens per Sec" log lines, its peak RSS
/usr/bin/time's. The parameter counts (JoeyNMT's "Total params") are printed for both.

Printed per attnlab variant besides: the matrix-product FLOPs of a training update per target
token (torch.utils.flop_counter over the first 5 timed batches, run again after the timing), the
achieved GFLOP/s (that times the median tokens/s) and its share of this machine's fp32 GEMM rate
(common.gemm_rate: torch.mm 1024^3, measured in the variant's process at its thread count).
JoeyNMT's row has none of these ("-"). Usage:

    python benchmarks/train_throughput.py [--model rnn|transformer] [--updates 200]
        [--window 20] [--threads 2] [--no-joeynmt]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from common import PEERS
from peers.joeynmt import run_joeynmt

if TYPE_CHECKING:
    from attnlab.models import ModelConfig
    from attnlab.train import TrainConfig

WINDOW = 20  # updates per measured window (--window)
FLOP_UPDATES = 5  # timed batches whose updates are counted again under the FLOP counter
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Setup:
    """What one attnlab row trains: the model, sentences per batch, the optimiser's settings
    (train.lr, betas, clip_norm) and the label smoothing."""

    model: ModelConfig
    batch_size: int
    train: TrainConfig
    label_smoothing: float


def rnn_setup(decoder: str, input_feeding: bool) -> Setup:
    """JoeyNMT's RNN model with attnlab's `decoder`, as the peer's config trains it."""
    from attnlab.train import TrainConfig
    from common import reference_model

    return Setup(reference_model(decoder, input_feeding), 64, TrainConfig(lr=2e-4), 0.0)


def transformer_setup() -> Setup:
    """configs/multi30k-transformer.yaml's model, batch, optimiser and label smoothing."""
    from attnlab.config import load_config
    from attnlab.configs import config_path
    from attnlab.translation.config import RunConfig

    config = load_config(config_path("multi30k-transformer"), RunConfig)
    return Setup(config.model, config.data.batch_size, config.train,
                 config.loss.label_smoothing)


@dataclass(frozen=True)
class Benchmark:
    """One model trained by both toolkits: attnlab's variants, JoeyNMT's config and its row."""

    title: str
    variants: dict[str, Callable[[], Setup]]
    joeynmt_config: Path  # `@WORK@` stands for the peer's work folder
    joeynmt_row: str


MODELS = {
    "rnn": Benchmark(
        "JoeyNMT's RNN model, batches of 64 sentences",
        {"luong+feed (= JoeyNMT model)": lambda: rnn_setup("luong", True),
         "bahdanau": lambda: rnn_setup("bahdanau", True),
         "luong, no input feeding": lambda: rnn_setup("luong", False)},
        PEERS / "configs" / "rnn_multi30k_deen.yaml",
        "JoeyNMT 2.3 (its 'bahdanau' RNN)"),
    "transformer": Benchmark(
        "configs/multi30k-transformer.yaml, batches of 128 sentences",
        {"transformer (= JoeyNMT model)": transformer_setup},
        HERE / "peers" / "joeynmt_transformer.yaml",
        "JoeyNMT 2.3 transformer"),
}
VARIANTS = {name: setup for model in MODELS.values() for name, setup in model.variants.items()}


def measure(setup: Setup, updates: int, threads: int, window: int) -> dict:
    """Train `updates` steps in this process; median tokens/s over `window`-update windows, the
    matrix-product FLOPs per target token of an update and this process's fp32 GEMM rate."""
    import torch

    from attnlab.data import BucketBatchSampler, collate
    from attnlab.models import build_model
    from attnlab.train.loop import OPTIMIZERS
    from attnlab.translation.corpus import encode_corpus, read_split
    from common import gemm_rate, matmul_flops, multi30k_config, multi30k_vocabularies

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    data = multi30k_config()
    vocabs = multi30k_vocabularies(data)
    corpus = encode_corpus(read_split(data, "train"), vocabs, 100)
    model = build_model(setup.model, len(vocabs.src), len(vocabs.tgt))
    optimizer = OPTIMIZERS[setup.train.optimizer](model.parameters(), setup.train)  # as train
    sampler = BucketBatchSampler([(len(s) + 1, len(t) + 1) for s, t in corpus.pairs],
                                 setup.batch_size, shuffle=True, seed=1)
    batches = iter(sampler)

    def update(batch) -> None:
        out = model(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_mask)  # as the task
        loss = model.loss(out, batch.tgt_out, batch.tgt_mask, setup.label_smoothing).loss
        optimizer.zero_grad()
        loss.backward()
        if setup.train.clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), setup.train.clip_norm)
        optimizer.step()

    rates, tokens, start, counted = [], 0, time.perf_counter(), []
    for step in range(1, updates + 1):
        batch = collate([corpus.pairs[i] for i in next(batches)])
        update(batch)
        tokens += batch.num_target_tokens
        if window < step <= window + FLOP_UPDATES:
            counted.append(batch)
        if step % window == 0:
            now = time.perf_counter()
            if step > window:  # the first window warms up allocator and caches
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


def run_variant(name: str, updates: int, threads: int, window: int) -> dict:
    command = [sys.executable, __file__, "--worker", name, "--updates", str(updates),
               "--threads", str(threads), "--window", str(window)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    args = options()
    if args.worker:
        print(json.dumps(measure(VARIANTS[args.worker](), args.updates, args.threads,
                                 args.window)))
        return
    benchmark = MODELS[args.model]
    print(f"Training throughput, Multi30k de->en, {benchmark.title}, {args.updates} updates, "
          f"{args.threads} threads; median target tokens/s over {args.window}-update windows "
          f"after the first\n")
    joey = None if args.no_joeynmt else run_joeynmt(benchmark.joeynmt_config, args.updates,
                                                    args.threads, args.window)
    rows = ["| model | parameters | target tokens/s (min-max) | GFLOP per token | GFLOP/s (share "
            "of GEMM rate) | fp32 GEMM rate (torch.mm 1024^3) | peak RSS | vs JoeyNMT |",
            "|---|---|---|---|---|---|---|---|"]
    if joey:
        print(f"JoeyNMT built {joey.model} ({joey.parameters:,} parameters); log: {joey.log}")
        rows.append(f"| {benchmark.joeynmt_row} | {joey.parameters:,} | "
                    f"{joey.tokens_per_s:,.0f} ({joey.low:,.0f}-{joey.high:,.0f}) | - | - | - | "
                    f"{joey.peak_rss_mib:,.0f} MiB | 1.00x |")
        print(rows[-1], flush=True)
    for name in benchmark.variants:
        r = run_variant(name, args.updates, args.threads, args.window)
        ratio = f"{r['tokens_per_s'] / joey.tokens_per_s:.2f}x" if joey else "-"
        achieved = r["flops_per_token"] * r["tokens_per_s"] / 1e9
        rows.append(f"| attnlab {name} | {r['parameters']:,} | {r['tokens_per_s']:,.0f} "
                    f"({r['min']:,.0f}-{r['max']:,.0f}) | {r['flops_per_token'] / 1e9:.3f} | "
                    f"{achieved:.1f} ({achieved / r['gemm_rate']:.0%}) | "
                    f"{r['gemm_rate']:.1f} GFLOP/s | {r['peak_rss_mib']:,.0f} MiB | {ratio} |")
        print(rows[-1], flush=True)
        if joey:
            print(f"  parameters attnlab/JoeyNMT: {r['parameters'] / joey.parameters:.4f}")
    print("\n" + "\n".join(rows))


def arguments() -> argparse.ArgumentParser:
    from common import whole_number

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="rnn",
                        help="the model both toolkits train (default: rnn)")
    parser.add_argument("--updates", type=whole_number(2), default=200)
    parser.add_argument("--window", type=whole_number(1), default=WINDOW,
                        help=f"updates per measured window (default {WINDOW})")
    parser.add_argument("--threads", type=whole_number(1), default=2)
    parser.add_argument("--no-joeynmt", action="store_true", help="skip the peer")
    parser.add_argument("--worker", choices=sorted(VARIANTS), help=argparse.SUPPRESS)
    return parser


def options(argv: list[str] | None = None) -> argparse.Namespace:
    """The parsed options; a median needs a window after the first (warm-up) one."""
    parser = arguments()
    args = parser.parse_args(argv)
    if args.updates < 2 * args.window:
        parser.error(f"--updates {args.updates} leaves no window after the first (warm-up) "
                     f"one: give at least {2 * args.window} (twice --window {args.window})")
    return args


if __name__ == "__main__":
    main()
