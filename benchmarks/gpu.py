"""Training and beam-search throughput on one GPU in fp32, bf16 and fp16, with the share of the
GPU's peak they reach, on a translation model of a realistic size, in one command:

    python benchmarks/gpu.py            # about 2 minutes on an H200 (10 at most)
    python benchmarks/gpu.py --quick    # under a minute
    python benchmarks/gpu.py --require-gpu   # exit 1, not 0, where there is no GPU
    python benchmarks/gpu.py --device cpu --batch-tokens 256   # a check of the script
                                        # itself without a GPU: a tiny budget, no real figures

The model is Bahdanau et al.'s RNNsearch at a WMT-like size: a bidirectional GRU encoder of 512
per direction, a GRU decoder of 1024 with additive attention (1024) and a deep output of 512,
embeddings of 512 and vocabularies of 32,000 on either side; the data are synthetic sentence
pairs with WMT-like lengths (log-normal, median 22 pieces), in batches of 4,096 target tokens.
Training is `attnlab train`'s own loop (attnlab.train.train with train.precision set): its
tokens/s are the median over its log windows after the first (which warms up), as it logs them
in metrics.jsonl. Decoding is attnlab's beam search (beam 5) under the same autocast, each
sentence given at most 1.1 n + 2 output pieces (an untrained model seldom ends earlier).

Achieved TFLOP/s is the matrix-product FLOPs per token (torch.utils.flop_counter, counted once
in fp32 on the CPU, where the GRUs run as matrix products it sees; element-wise work is not
counted) times the tokens/s; the share is of the peak for the precision, dense (no sparsity),
from a table by device name (an unknown GPU gets figures without a share). The fp32 rows run
with torch's defaults, printed: TF32 matrix products off, cuDNN (the GRUs) allowed TF32.
Without CUDA this says so in one sentence and exits 0 (1 with --require-gpu).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

# Dense peaks in TFLOP/s (vendor data sheets), tried in order: the first name contained in
# torch.cuda.get_device_name() wins. fp16/bf16: tensor cores; fp32: without TF32.
PRECISIONS = ("fp32", "bf16", "fp16")   # train.precision's, each measured in turn
PEAKS = [
    ("H200 NVL", {"bf16": 835.0, "fp16": 835.0, "fp32": 60.0}),
    ("H200", {"bf16": 989.0, "fp16": 989.0, "fp32": 67.0}),
    ("H100 NVL", {"bf16": 835.0, "fp16": 835.0, "fp32": 60.0}),
    ("H100 PCIe", {"bf16": 756.0, "fp16": 756.0, "fp32": 51.0}),
    ("H100", {"bf16": 989.0, "fp16": 989.0, "fp32": 67.0}),
    ("A100", {"bf16": 312.0, "fp16": 312.0, "fp32": 19.5}),
    ("L40S", {"bf16": 362.0, "fp16": 362.0, "fp32": 91.6}),
    ("L4", {"bf16": 121.0, "fp16": 121.0, "fp32": 30.3}),
    ("V100", {"fp16": 125.0, "fp32": 15.7}),
]
VOCAB = 32000
BUDGETS = {  # updates per log window, windows (the first one warms up), sentences decoded
    "default": {"window": 25, "windows": 8, "sentences": 1024},
    "quick": {"window": 10, "windows": 4, "sentences": 256},
    "cpu": {"window": 2, "windows": 2, "sentences": 8},
}


def on_cuda(device: str) -> bool:
    return torch.device(device).type == "cuda"


def model_config():
    from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig

    return ModelConfig(
        encoder=EncoderConfig(rnn="gru", embedding_dim=512, hidden_dim=512, dropout=0.1),
        decoder=DecoderConfig(kind="bahdanau", rnn="gru", embedding_dim=512, hidden_dim=1024,
                              output_dim=512, dropout=0.1,
                              attention=AttentionConfig(score="additive", hidden_dim=1024)))


def synthetic_pairs(count: int, seed: int = 0) -> list[tuple[list[int], list[int]]]:
    """Sentence pairs of WMT-like lengths (log-normal, median 22, 3 to 80 pieces; the target
    0.8 to 1.2 times the source) of random piece ids."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.exp(torch.randn(count, generator=generator) * 0.5 + 3.1).clamp(3, 80)
    ratios = 0.8 + 0.4 * torch.rand(count, generator=generator)
    pairs = []
    for length, ratio in zip(lengths.tolist(), ratios.tolist(), strict=True):
        source, target = int(length), max(1, int(length * ratio))
        pairs.append((torch.randint(4, VOCAB, (source,), generator=generator).tolist(),
                      torch.randint(4, VOCAB, (target,), generator=generator).tolist()))
    return pairs


class SyntheticTask:
    """The translation task's training step (the model's own loss) on synthetic pairs."""

    def __init__(self, pairs, batch_tokens: int, seed: int = 0):
        from attnlab.data import BucketBatchSampler
        from attnlab.models import build_model

        self.pairs = pairs
        torch.manual_seed(seed)
        self.model = build_model(model_config(), VOCAB, VOCAB)
        self.sampler = BucketBatchSampler([(len(s) + 1, len(t) + 1) for s, t in pairs],
                                          batch_tokens, batch_unit="tokens", shuffle=True,
                                          seed=seed)

    def make_batch(self, indices):
        from attnlab.data import collate

        return collate([self.pairs[i] for i in indices], indices=indices)

    def loss(self, model, batch):
        from attnlab.train import LossOutput
        from attnlab.train.distributed import unwrap

        out = model(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_mask)
        result = unwrap(model).loss(out, batch.tgt_out, batch.tgt_mask, 0.1)
        return LossOutput(result.loss, result.nll_sum, result.tokens)

    def validate(self, model):
        from attnlab.train import Validation

        return Validation({"pairs": float(len(self.pairs))})

    def signature(self):
        return {"model": "gpu benchmark"}


def decode(model, sources, precision: str, beam: int, batch_size: int = 64) -> int:
    """Beam-search `sources` under `precision`'s autocast; the output pieces of the best
    hypotheses."""
    from attnlab.data import collate
    from attnlab.decode import beam_search
    from attnlab.train.device import Precision

    device = next(model.parameters()).device
    autocast, produced = Precision(precision, device).autocast(), 0
    with torch.no_grad(), autocast:
        for start in range(0, len(sources), batch_size):
            batch = collate([(s, []) for s in sources[start : start + batch_size]])
            found = beam_search(model, batch.src.to(device), batch.src_mask.to(device),
                                beam_size=beam, max_len=lambda n: int(1.1 * n) + 2)
            produced += sum(len(hypotheses[0].tokens) for hypotheses in found)
    return produced


def flops_per_token(task: SyntheticTask, sources, beam: int) -> tuple[float, float]:
    """Matrix-product FLOPs per target token of a training update (forward and backward) and
    per output piece of beam search, counted on the CPU in fp32."""
    from common import matmul_flops

    model = task.model.cpu().train()
    batch = task.make_batch(next(iter(task.sampler))[:8])

    def update():
        task.loss(model, batch).loss.backward()

    train = matmul_flops(update) / batch.num_target_tokens
    model.zero_grad(set_to_none=True)
    produced = []
    sample = sources[:: max(1, len(sources) // 4)][:4]   # short to long, as the whole set
    counted = matmul_flops(lambda: produced.append(decode(model, sample, "fp32", beam)))
    return train, counted / produced[0]


def train_row(pairs, precision: str, budget: dict, batch_tokens: int, device: str) -> dict:
    """Train with attnlab's loop on `device` in `precision`: median tokens/s and ms per
    update over the log windows after the first, and the peak GPU memory."""
    from attnlab.train import RunDir, TrainConfig, train

    window, windows = budget["window"], budget["windows"]
    config = TrainConfig(lr=1e-3, max_steps=window * windows, max_epochs=None,
                         validate_every=None, checkpoint_every=None, log_every=window,
                         tensorboard=False, device=device, precision=precision)
    if on_cuda(device):
        torch.cuda.reset_peak_memory_stats()
    with tempfile.TemporaryDirectory() as directory:
        train(SyntheticTask(pairs, batch_tokens), config, RunDir(directory), progress=False)
        lines = (Path(directory) / "metrics.jsonl").read_text().splitlines()
    logged = [r for r in map(json.loads, lines) if r["kind"] == "train"][1:]
    row = {"tokens/s": statistics.median(r["tokens_per_second"] for r in logged),
           "ms": statistics.median(r["ms_per_step"] for r in logged),
           "loss": logged[-1]["loss"]}
    if on_cuda(device):
        row["memory"] = torch.cuda.max_memory_allocated() / 2**30
    return row


def decode_row(model, sources, precision: str, beam: int) -> dict:
    cuda = next(model.parameters()).is_cuda
    decode(model, sources[:64], precision, beam)   # warm-up: kernels, cuDNN plans
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    produced = decode(model, sources, precision, beam)
    if cuda:
        torch.cuda.synchronize()
    return {"tokens/s": produced / (time.perf_counter() - start)}


def measured(row, *args) -> dict:
    """A row's figures, or the first line of why it failed (the other rows still run)."""
    try:
        return row(*args)
    except Exception as error:  # one precision failing must not hide the others' figures
        return {"error": f"{type(error).__name__}: {str(error).strip().splitlines()[0]}"}


def print_rows(title: str, rows: dict[str, dict], flops: float, peaks: dict | None) -> None:
    print(f"\n{title}")
    print(f"{'precision':<10}{'tokens/s':>11}{'vs fp32':>9}{'TFLOP/s':>9}{'of peak':>9}"
          f"{'ms/update':>11}{'memory':>10}{'last loss':>11}")
    base = rows.get("fp32", {}).get("tokens/s")
    for name, row in rows.items():
        if "error" in row:
            print(f"{name:<10}failed: {row['error']}")
            continue
        rate = row["tokens/s"]
        achieved = flops * rate / 1e12
        peak = (peaks or {}).get(name)
        share = f"{100 * achieved / peak:.1f}%" if peak else "-"
        ratio = f"{rate / base:.2f}x" if base else "-"
        ms = f"{row['ms']:.1f}" if "ms" in row else "-"
        memory = f"{row['memory']:.1f} GiB" if "memory" in row else "-"
        loss = f"{row['loss']:.3f}" if "loss" in row else "-"
        print(f"{name:<10}{rate:>11,.0f}{ratio:>9}{achieved:>9.1f}{share:>9}{ms:>11}"
              f"{memory:>10}{loss:>11}")


def header(name: str, peaks: dict | None, model, flops: tuple[float, float], args) -> None:
    matched = ", ".join(f"{k} {v:g}" for k, v in peaks.items()) if peaks else None
    print(f"attnlab GPU benchmark on {name}, torch {torch.__version__}; dense peak TFLOP/s "
          f"from the table: {matched or 'not in the table (no share printed)'}")
    print(f"fp32 settings: TF32 matrix products {torch.backends.cuda.matmul.allow_tf32}, "
          f"cuDNN TF32 {torch.backends.cudnn.allow_tf32}")
    size = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"model: bi-GRU encoder 512 per direction, Bahdanau GRU decoder 1024, additive "
          f"attention 1024, embeddings 512, vocabularies {VOCAB:,} ({size:.1f}M parameters); "
          f"batches of {args.batch_tokens:,} target tokens; beam {args.beam}")
    print(f"matrix-product FLOPs per token (flop_counter, fp32 on the CPU): training update "
          f"{flops[0] / 1e9:.2f} GFLOP per target token, beam search {flops[1] / 1e9:.2f} GFLOP "
          f"per output piece")


def arguments() -> argparse.ArgumentParser:
    from common import subset, whole_number

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller budget (under a minute)")
    parser.add_argument("--require-gpu", action="store_true",
                        help="exit 1 when there is no CUDA device (default: 0)")
    parser.add_argument("--precisions", type=subset(PRECISIONS), default=PRECISIONS,
                        help="a subset of fp32,bf16,fp16 (default all)")
    parser.add_argument("--beam", type=whole_number(1, 1000), default=5,
                        help="beam size, at most 1000 as attnlab translate's (default 5)")
    # a batch must hold the longest synthetic pair (80 source and 96 target pieces)
    parser.add_argument("--batch-tokens", type=whole_number(256), default=4096)
    parser.add_argument("--sentences", type=whole_number(1), help="sentences decoded (default "
                        "1024, 256 with --quick, 8 on the CPU)")
    parser.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu to "
                        "check the script itself where there is no GPU")
    return parser


def main() -> int:
    args = arguments().parse_args()
    if on_cuda(args.device) and not torch.cuda.is_available():
        print("benchmarks/gpu.py measures CUDA training and decoding, and torch sees no CUDA "
              "device here, so nothing was measured.")
        return 1 if args.require_gpu else 0
    budget = BUDGETS["cpu" if not on_cuda(args.device) else "quick" if args.quick
                     else "default"]
    started = time.perf_counter()
    name = torch.cuda.get_device_name(args.device) if on_cuda(args.device) else "the CPU"
    peaks = next((p for key, p in PEAKS if key in name), None)
    pairs = synthetic_pairs(budget["window"] * budget["windows"] * args.batch_tokens // 20)
    # length-sorted, as attnlab translate batches a file
    sources = sorted((source for source, _ in
                      synthetic_pairs(args.sentences or budget["sentences"], seed=1)), key=len)
    task = SyntheticTask(pairs, args.batch_tokens)
    flops = flops_per_token(task, sources, args.beam)
    header(name, peaks, task.model, flops, args)
    precisions = args.precisions
    training = {p: measured(train_row, pairs, p, budget, args.batch_tokens, args.device)
                for p in precisions}
    print_rows("training (attnlab train's loop; target tokens/s)", training, flops[0], peaks)
    model = task.model.to(args.device).eval()
    decoding = {p: measured(decode_row, model, sources, p, args.beam) for p in precisions}
    print_rows(f"beam search (beam {args.beam}, 64 sentences a batch, {len(sources)} sentences; "
               f"output pieces/s)", decoding, flops[1], peaks)
    print(f"\n{time.perf_counter() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
