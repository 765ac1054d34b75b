"""Training speed of the LSTMN language model beside the LSTM of equal size, in one run.

The models are the shipped `lm-multi30k-lstmn` (2.77M parameters, additive intra-attention) and
`lm-multi30k-lstm` (hidden 283, 2.77M) on Multi30k English with their 4k BPE, batches of 64
sentences, Adam, dropout on: real training updates (forward, backward, clip, step).

Variants timed in interleaved rounds: each round draws --window fresh batches and runs every
variant on them; medians over rounds (ms/update: at the average batch):
- `LSTMN before`: the layer step by step under autograd, logits at every padded position
  (the code before issue 14);
- `LSTMN`: the fused layer (attnlab.models.lstmn_fused), logits at real positions only;
- `LSTM before` / `LSTM`: nn.LSTM with the old and the new loss.

Printed: target tokens/s, ms/update, the achieved GFLOP/s of the update (matrix-product FLOPs
counted by torch.utils.flop_counter on the same batches) and its share of this machine's fp32
GEMM rate, measured in the same run; with --breakdown, where a fused LSTMN update's time goes
(the layer, the output layer's products, the cross-entropy, the optimizer step). Usage:

    python benchmarks/lstmn_speed.py [--threads 1] [--rounds 7] [--window 20] [--breakdown]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from attnlab.configs import config_file
from attnlab.lm import LanguageModelTask, LMRunConfig
from attnlab.lm.task import batch_nll
from attnlab.train import experiment_config
from common import CACHE, DATA, gemm_rate, whole_number


def old_batch_nll(model, batch) -> torch.Tensor:
    """The loss before issue 14: logits at every position (padding too), then masked."""
    logits = model.all_positions(batch.inputs, batch.mask).logits.transpose(1, 2)  # (B, V, T)
    token_nll = F.cross_entropy(logits, batch.targets, reduction="none")  # (B, T)
    return (token_nll * batch.mask).sum()


def build_task(name: str) -> LanguageModelTask:
    """The shipped config on the local Multi30k; its BPE trained once and cached."""
    vocab_dir = CACHE / "lm-multi30k-bpe4k"
    config = experiment_config(LMRunConfig, str(config_file(name)), None,
                               [f"data.dir={DATA / 'multi30k'}"], False)
    if not (DATA / "multi30k" / config.data.train).is_file():
        raise SystemExit(f"Multi30k not found in {DATA / 'multi30k'}: set ATTNLAB_DATA")
    cached = (vocab_dir / "vocab.json").is_file()
    task = LanguageModelTask(config, vocab_dir if cached else None, log=lambda _: None)
    if not cached:
        vocab_dir.mkdir(parents=True, exist_ok=True)
        task.save_files(vocab_dir)
    return task


class Variant:
    """One model and one loss, with its own optimizer; `update(batch)` is one training step."""

    def __init__(self, task: LanguageModelTask, fused: bool, loss):
        self.model = copy.deepcopy(task.model)  # its own weights, its own `fused` switch
        for layer in getattr(self.model.reader, "layers", []):
            layer.fused = fused
        self.loss = loss
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3, fused=True)

    def update(self, batch) -> None:
        loss = self.loss(self.model, batch) / batch.num_target_tokens
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()

    def flops(self, batches) -> int:
        with FlopCounterMode(display=False) as counter:
            for batch in batches:
                self.update(batch)
        return counter.get_total_flops()


def breakdown(task: LanguageModelTask, batches: list, rate: float) -> None:
    """Where a fused LSTMN update goes: each part timed alone on the same batches (medians of 3
    passes), with its matrix-product GFLOP/s."""
    variant = Variant(task, True, batch_nll)
    model = variant.model
    reader, output = model.reader, model.output

    def layer(batch):
        embedded = model.embedding(batch.inputs).detach().requires_grad_()
        outputs = reader(embedded, batch.mask).outputs
        outputs.backward(torch.ones_like(outputs))

    def head(batch):
        features = torch.randn(batch.num_target_tokens, output.in_features, requires_grad=True)
        logits = output(features)
        logits.backward(torch.ones_like(logits))

    def cross_entropy(batch):
        logits = torch.randn(batch.num_target_tokens, output.out_features, requires_grad=True)
        F.cross_entropy(logits, batch.targets[batch.mask], reduction="sum").backward()

    def step(batch):
        torch.nn.utils.clip_grad_norm_(variant.model.parameters(), 1.0)
        variant.optimizer.step()

    parts = {"whole update": variant.update, "LSTMN layer forward + backward": layer,
             "output layer's matrix products, forward + backward": head,
             "softmax cross-entropy, forward + backward": cross_entropy,
             "gradient clipping + Adam step": step}
    for part in parts.values():  # warm-up
        part(batches[0])
    flops, times = {}, {}
    for name, part in parts.items():
        with FlopCounterMode(display=False) as counter:
            for batch in batches:
                part(batch)
        flops[name] = counter.get_total_flops()
        passes = []
        for _ in range(3):
            start = time.perf_counter()
            for batch in batches:
                part(batch)
            passes.append(time.perf_counter() - start)
        times[name] = statistics.median(passes)
    print("\nWhere a fused LSTMN update goes (each part alone, the same batches):\n\n"
          "| part | ms/update | share of the update | GFLOP/s (share of GEMM rate) |\n"
          "|---|---|---|---|")
    whole = times["whole update"]
    for name, seconds in times.items():
        achieved = flops[name] / seconds / 1e9
        print(f"| {name} | {seconds / len(batches) * 1000:.0f} | {seconds / whole:.0%} | "
              f"{achieved:.1f} ({achieved / rate:.0%}) |", flush=True)


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=whole_number(1), default=1,
                        help="torch threads (default 1)")
    parser.add_argument("--rounds", type=whole_number(1), default=7)
    parser.add_argument("--window", type=whole_number(1), default=20,
                        help="updates per variant per round")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time the parts of a fused LSTMN update one by one")
    return parser


def main() -> None:
    args = arguments().parse_args()
    torch.set_num_threads(args.threads)
    lstmn_task, lstm_task = build_task("lm-multi30k-lstmn"), build_task("lm-multi30k-lstm")
    variants = {
        "LSTMN before (step by step, all-position logits)": Variant(lstmn_task, False,
                                                                    old_batch_nll),
        "LSTMN (fused layer, real-position logits)": Variant(lstmn_task, True, batch_nll),
        "LSTM before (all-position logits)": Variant(lstm_task, True, old_batch_nll),
        "LSTM (real-position logits)": Variant(lstm_task, True, batch_nll),
    }
    # Every round draws fresh batches (the LSTMN's cost grows with length squared, so a few
    # batches would not stand for the corpus); within a round all variants train on the same.
    sampler = iter(lstmn_task.sampler)
    rounds = [[lstmn_task.make_batch(next(sampler)) for _ in range(args.window)]
              for _ in range(args.rounds)]
    flops = {name: variant.flops(rounds[0][:3]) for name, variant in variants.items()}
    flop_tokens = sum(batch.num_target_tokens for batch in rounds[0][:3])
    rates: dict[str, list[float]] = {name: [] for name in variants}  # tokens/s per round
    gemm_rates = []
    for batches in rounds:
        gemm_rates.append(gemm_rate())
        tokens = sum(batch.num_target_tokens for batch in batches)
        for name, variant in variants.items():
            start = time.perf_counter()
            for batch in batches:
                variant.update(batch)
            rates[name].append(tokens / (time.perf_counter() - start))
    rate = statistics.median(gemm_rates)
    updates = args.rounds * args.window
    tokens = sum(batch.num_target_tokens for batches in rounds for batch in batches)
    print(f"LSTMN vs LSTM language-model training, Multi30k English (4k BPE), batches of 64 "
          f"sentences ({tokens / updates:.0f} target tokens per update on average), "
          f"{args.threads} thread(s), torch {torch.__version__}; medians of {args.rounds} rounds "
          f"x {args.window} updates; fp32 GEMM rate (torch.mm 1024^3) {rate:.1f} GFLOP/s\n")
    print("| variant | target tokens/s (min-max) | ms/update | GFLOP per token | GFLOP/s "
          "(share of GEMM rate) | vs LSTMN before |\n|---|---|---|---|---|---|")
    base = statistics.median(rates[next(iter(variants))])
    for name, speeds in rates.items():
        mid = statistics.median(speeds)
        per_token = flops[name] / flop_tokens
        achieved = per_token * mid / 1e9
        print(f"| {name} | {mid:,.0f} ({min(speeds):,.0f}-{max(speeds):,.0f}) | "
              f"{tokens / updates / mid * 1000:.0f} | {per_token / 1e6:.2f} M | "
              f"{achieved:.1f} ({achieved / rate:.0%}) | {mid / base:.2f}x |", flush=True)
    if args.breakdown:
        breakdown(lstmn_task, rounds[0], rate)


if __name__ == "__main__":
    main()
