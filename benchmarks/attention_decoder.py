"""benchmarks/attention.py's decoder section (issue 25): local-p against global attention
through the translation decoder, over n = 1,024 and 4,096 source positions.

The decoder is Luong et al.'s (GRU 256, general score, D = 10, 1,000 target words, without input
feeding so that teacher forcing makes one attention call), over annotations (B, n, 256) given as
they are (the encoder's work is the same for every mechanism and is left out). Two calls:

    step:    decoder.step for B = 16 rows (a beam of 4 over 4 sentences), keys projected once at
             `start`, outside the timed call, as search does;
    forward: teacher forcing over T = n / 2 target positions for B = 8 sentences
             (`decoder.all_positions`), key projection included.

Beside the times: the matrix-product FLOPs of each call (torch.utils.flop_counter), so the ratio a
mechanism's FLOPs allow is printed beside the ratio measured. Variants: global; local-p with its
weights as windows (what the decoder keeps); local-p with
dense (B, T, n) weights (what the decoder read before issue 25: its layer's `compact` replaced
by the dense `forward`). Every variant is timed once per round, rounds interleave, medians.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig, build_model
from attnlab.models.encoder import EncoderOutput
from common import matmul_flops

LENGTHS = (1024, 4096)
ROWS, SENTENCES, DIM, VOCAB, WINDOW = 16, 8, 256, 1000, 10
VARIANTS = ("global", "local-p", "local-p, dense weights (before)")


def _decoder(variant: str):
    mechanism = "global" if variant == "global" else "local-p"
    config = ModelConfig(
        encoder=EncoderConfig(embedding_dim=DIM, hidden_dim=DIM // 2, dropout=0.0),
        decoder=DecoderConfig(kind="luong", embedding_dim=DIM, hidden_dim=DIM, dropout=0.0,
                              input_feeding=False, output_dim=DIM,
                              attention=AttentionConfig(
                                  score="general", mechanism=mechanism,
                                  window=None if mechanism == "global" else WINDOW)))
    torch.manual_seed(0)
    decoder = build_model(config, VOCAB, VOCAB, max_src_len=max(LENGTHS)).decoder.eval()
    if variant.endswith("(before)"):
        layer = decoder.attention
        layer.compact = layer.forward  # dense (B, T, n) weights, as before issue 25
    return decoder


def _encoded(batch: int, length: int) -> EncoderOutput:
    annotations = torch.randn(batch, length, DIM)
    mask = torch.ones(batch, length, dtype=torch.bool)
    return EncoderOutput(annotations, mask, (torch.zeros(2, batch, DIM // 2),),
                         torch.randn(batch, DIM))


def calls(length: int) -> dict[tuple[str, str], Callable[[], object]]:
    """(call, variant) -> the call at `length` source positions."""
    found: dict[tuple[str, str], Callable[[], object]] = {}
    step_encoded, sentences = _encoded(ROWS, length), _encoded(SENTENCES, length)
    tokens = torch.randint(4, VOCAB, (ROWS,))
    targets = torch.randint(4, VOCAB, (SENTENCES, length // 2))
    for variant in VARIANTS:
        decoder = _decoder(variant)
        state = decoder.start(step_encoded)
        found["step", variant] = lambda d=decoder, s=state: d.step(tokens, s)
        found["forward", variant] = lambda d=decoder: d.all_positions(targets, sentences)
    return found


def _median(call: Callable[[], object], repeats: int) -> float:
    call()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def decoder_rows(repeats: int, rate: float,
                 fmt: Callable[[float], str] = lambda s: f"{s * 1e3:.2f} ms") -> list[str]:
    """The table: per call and variant, times at each n, growth, and global / variant."""
    rounds = max(5, repeats // 7)
    found: dict[int, dict[tuple[str, str], float]] = {}
    flops: dict[tuple[str, str], int] = {}  # at the larger n
    for length in LENGTHS:
        timed = calls(length)
        times: dict[tuple[str, str], list[float]] = {key: [] for key in timed}
        for _ in range(rounds):
            for key, call in timed.items():
                times[key].append(_median(call, repeats=3 if key[0] == "step" else 1))
        found[length] = {key: statistics.median(t) for key, t in times.items()}
        flops = {key: matmul_flops(call) for key, call in timed.items()}
    small, large = (found[n] for n in LENGTHS)
    rows = [f"Luong decoder (GRU {DIM}, general, D={WINDOW}, {VOCAB:,} words, no input "
            f"feeding); step: B={ROWS} rows, one step, keys projected at start; forward: "
            f"B={SENTENCES}, T = n/2 teacher-forced positions; medians of {rounds} interleaved "
            f"rounds\n",
            "| call | variant | n=1024 | n=4096 | growth 1024 -> 4096 | global / variant "
            "at 4096 | matmul GFLOP at 4096 (global / variant) |", "|---|---|---|---|---|---|---|"]
    for call in ("step", "forward"):
        for variant in VARIANTS:
            key, base = (call, variant), (call, "global")
            rows.append(f"| {call} | {variant} | {fmt(small[key])} | {fmt(large[key])} | "
                        f"{large[key] / small[key]:.2f}x | {large[base] / large[key]:.1f}x | "
                        f"{flops[key] / 1e9:.3g} ({flops[base] / flops[key]:.1f}x) |")
    step, forward = ("step", "local-p"), ("forward", "local-p")
    rows.append(f"\nlocal-p decoder step: {large[('step', 'global')] / large[step]:.1f}x faster "
                f"than global at n=4096, growth {large[step] / small[step]:.2f}x; teacher-forced "
                f"forward: {large[('forward', 'global')] / large[forward]:.1f}x faster, growth "
                f"{large[forward] / small[forward]:.2f}x (T grows with n: linear is 4x)")
    rows.append("The FLOP ratio bounds what skipping attention saves: the RNN, output layer and "
                "projections are the same work for every mechanism (torch's FLOP counter; local "
                "attention's own window kernels are not counted, and are small).")
    return rows
