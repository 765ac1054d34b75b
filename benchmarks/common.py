"""What the benchmarks share: the Multi30k data, its joint 8k BPE, and the reference model.

The reference model is JoeyNMT's RNN model in ../shared/peers/joeynmt: embeddings 256,
bidirectional GRU encoder 512 (per direction), GRU decoder 512, additive attention, dropout 0.3.
"""

from __future__ import annotations

import os
from pathlib import Path

from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig
from attnlab.translation.config import DataConfig
from attnlab.translation.corpus import Vocabularies, build_vocabularies, read_split

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ATTNLAB_DATA", REPO.parent / "shared" / "data"))
PEERS = REPO.parent / "shared" / "peers" / "joeynmt"
CACHE = Path(os.environ.get("ATTNLAB_BENCH_CACHE", Path.home() / ".cache" / "attnlab-bench"))


def multi30k_config() -> DataConfig:
    directory = DATA / "multi30k"
    if not (directory / "train.de.gz").is_file():
        raise SystemExit(f"Multi30k not found in {directory}: set ATTNLAB_DATA")
    return DataConfig(dir=str(directory), vocab="bpe", vocab_size=8000, joint_vocab=True)


def multi30k_vocabularies(config: DataConfig) -> Vocabularies:
    """The joint 8k BPE, trained once and cached."""
    directory = CACHE / "multi30k-bpe8k"
    if Vocabularies.exist_in(directory):
        return Vocabularies.load(directory)
    vocabularies = build_vocabularies(config, read_split(config, "train"))
    directory.mkdir(parents=True, exist_ok=True)
    vocabularies.save(directory)
    return vocabularies


def reference_model(decoder: str, input_feeding: bool = True) -> ModelConfig:
    """JoeyNMT's model, with attnlab's `luong` (= JoeyNMT's "bahdanau": update, then attend)
    or the true `bahdanau` decoder (attend with s_{t-1}, then update)."""
    return ModelConfig(
        encoder=EncoderConfig(rnn="gru", embedding_dim=256, hidden_dim=512, dropout=0.3),
        decoder=DecoderConfig(kind=decoder, rnn="gru", embedding_dim=256, hidden_dim=512,
                              dropout=0.3, input_feeding=input_feeding, output_dim=512,
                              attention=AttentionConfig(score="additive", hidden_dim=512)),
    )


def gemm_rate(size: int = 1024, repeats: int = 5) -> float:
    """This machine's fp32 GEMM rate in GFLOP/s at the current thread count: the fastest of
    `repeats` (size x size) @ (size x size) torch.mm calls after one warm-up."""
    import time

    import torch

    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


def matmul_flops(call) -> int:
    """The matrix-product FLOPs of call() (mm, bmm, addmm, attention kernels ...: what
    torch.utils.flop_counter counts, element-wise work not included), run once, not timed."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        call()
    return counter.get_total_flops()
