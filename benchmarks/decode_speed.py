"""Decoding speed of a trained model on test_2016_flickr (de->en): attnlab fp32, attnlab int8
(`--quantize int8`) and JoeyNMT 2.3 decoding the very same weights, greedy and beam 5, batch 64.

The model is the reference model of benchmarks/train_throughput.py (JoeyNMT's RNN model:
embeddings 256, bi-GRU 512, GRU 512, additive attention, input feeding), trained once by attnlab
for --updates updates (Adam 1e-3, batch 64, joint 8k BPE) and cached in $ATTNLAB_BENCH_CACHE
(default ~/.cache/attnlab-bench), so reruns only decode. joeynmt_export.py writes the same
weights and vocabulary as a JoeyNMT checkpoint, so both toolkits decode one model, except for
attnlab's output-layer bias, which JoeyNMT's model has no place for (dropped on its side; the
BLEU columns show what that costs). The peer's venv and data come from
../shared/peers/joeynmt/run.sh, in $PEERS_WORK (default ~/.cache/attnlab-peers).

Printed per search: sentences/s and target tokens/s (output pieces, end-of-sentence included),
BLEU (sacreBLEU, 13a), and for attnlab the achieved GFLOP/s of the search (matrix-product FLOPs
of the fp32 search, counted by torch.utils.flop_counter; the int8 row divides the same count by
its own time) with its share of this machine's fp32 GEMM rate, measured in the same run.
attnlab's times are the best of --rounds runs; JoeyNMT's come from its own "Generation took"
line (model loading excluded on both sides). Usage:

    python benchmarks/decode_speed.py [--updates 2500] [--threads 2] [--rounds 2] [--no-joeynmt]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import torch
from torch.utils.flop_counter import FlopCounterMode

from attnlab.data import read_lines
from attnlab.eval import corpus_bleu
from attnlab.models.quantize import quantize_int8
from attnlab.train import EarlyStoppingConfig, RunDir, TrainConfig, run_experiment
from attnlab.translation import DecodeConfig, RunConfig, TranslationTask, translate
from common import CACHE, DATA, PEERS, gemm_rate, multi30k_config, reference_model, whole_number

SEARCHES = {"greedy": 1, "beam 5": 5}


def attnlab_model(updates: int):
    """The reference model (luong + input feeding + additive = JoeyNMT's), trained once."""
    data = multi30k_config()
    data.valid_sentences = 100
    config = RunConfig(data=data, model=reference_model("luong", True),
                       train=TrainConfig(lr=1e-3, max_steps=updates, max_epochs=None,
                                         validate_every=updates, checkpoint_every=updates,
                                         early_stopping=EarlyStoppingConfig("bleu", "max")))
    config.loss.label_smoothing = 0.0
    run_dir = CACHE / f"decode-ref-{updates}"
    if not RunDir(run_dir).has_checkpoint("best"):
        print(f"training the attnlab reference model for {updates} updates (cached in "
              f"{run_dir}) ...", flush=True)
        run_experiment(TranslationTask, config, run_dir, progress=False, log=lambda _: None)
    task = TranslationTask(config, run_dir, log=lambda _: None)
    RunDir(run_dir).load_checkpoint("best", task.model)
    return task.model.eval(), task.vocabs


def target_tokens(texts: list[str], vocabs) -> int:
    """Output pieces under the target vocabulary, plus one end-of-sentence each: counted the
    same way for every system, from its output text."""
    return sum(len(vocabs.tgt.encode(text)) + 1 for text in texts)


def decode_config(beam: int) -> DecodeConfig:
    # JoeyNMT's settings: max_output_length -1 = 1.5 x the source, alpha 1.0, batches of 64.
    return DecodeConfig(beam=beam, alpha=1.0, max_len_ratio=1.5, max_len_extra=0, batch_size=64)


def time_attnlab(model, vocabs, sources, beam: int, rounds: int) -> tuple[float, list[str]]:
    """Best-of-rounds seconds for the whole test set, and the translations."""
    decode = decode_config(beam)
    translate(model, vocabs, sources[:64], decode)  # warm-up
    best, texts = float("inf"), []
    for _ in range(rounds):
        start = time.perf_counter()
        outputs = translate(model, vocabs, sources, decode)
        best = min(best, time.perf_counter() - start)
        texts = [o.text for o in outputs]
    return best, texts


def search_flops(model, vocabs, sources, beam: int) -> int:
    """Matrix-product FLOPs of one fp32 search over `sources` (not timed)."""
    with FlopCounterMode(display=False) as counter:
        translate(model, vocabs, sources, decode_config(beam))
    return counter.get_total_flops()


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=whole_number(1), default=2500)
    parser.add_argument("--threads", type=whole_number(1), default=2)
    parser.add_argument("--rounds", type=whole_number(1), default=2)
    parser.add_argument("--no-joeynmt", action="store_true")
    return parser


def main() -> None:
    args = arguments().parse_args()
    torch.set_num_threads(args.threads)
    test = DATA / "multi30k"
    sources = read_lines(test / "test_2016_flickr.de.gz")
    references = read_lines(test / "test_2016_flickr.en.gz")
    model, vocabs = attnlab_model(args.updates)
    int8 = quantize_int8(model)
    peer = {} if args.no_joeynmt else joeynmt_speeds(model, vocabs, args.updates, args.threads)
    rate = gemm_rate()
    print(f"\nDecoding test_2016_flickr ({len(sources)} sentences), batch 64, {args.threads} "
          f"threads, torch {torch.__version__}; the reference model after {args.updates} "
          f"updates; fp32 GEMM rate (torch.mm 1024^3) {rate:.1f} GFLOP/s\n")
    print("| search | system | sentences/s | target tokens/s | BLEU | GFLOP/s (share of GEMM "
          "rate) | vs JoeyNMT |\n|---|---|---|---|---|---|---|")
    for name, beam in SEARCHES.items():
        flops = search_flops(model, vocabs, sources, beam)
        theirs = peer.get(beam)
        for system, network in (("attnlab fp32", model), ("attnlab int8", int8)):
            seconds, texts = time_attnlab(network, vocabs, sources, beam, args.rounds)
            bleu = corpus_bleu(texts, references)[0]
            achieved = flops / seconds / 1e9
            ratio = f"{len(sources) / seconds / theirs[0]:.2f}x" if theirs else "-"
            print(f"| {name} | {system} | {len(sources) / seconds:.1f} | "
                  f"{target_tokens(texts, vocabs) / seconds:,.0f} | {bleu:.2f} | "
                  f"{achieved:.1f} ({achieved / rate:.0%}) | {ratio} |", flush=True)
        if theirs:
            speed, bleu, texts = theirs
            tokens = target_tokens(texts, vocabs) * speed / len(sources)
            print(f"| {name} | JoeyNMT 2.3 (same weights, no output bias) | {speed:.1f} | "
                  f"{tokens:,.0f} | "
                  f"{bleu:.2f} | - | 1.00x |", flush=True)


def joeynmt_speeds(model, vocabs, updates: int,
                   threads: int) -> dict[int, tuple[float, float, list[str]]]:
    """beam -> (sentences/s, BLEU, translations) of JoeyNMT decoding attnlab's weights (less the
    output bias, which JoeyNMT's model does not have: see joeynmt_export.py)."""
    from joeynmt_export import (
        export_to_joeynmt,
        joeynmt_decode_speed,
        joeynmt_python,
        peers_work,
    )

    if not joeynmt_python().is_file() or not (peers_work() / "data" / "multi30k").is_dir():
        print(f"setting up JoeyNMT in {peers_work()} (the peer's run.sh) ...", flush=True)
        subprocess.run(["bash", str(PEERS / "run.sh")], check=True, capture_output=True,
                       env={**os.environ, "UPDATES": "20"})  # its venv and data
    config = export_to_joeynmt(model, vocabs, CACHE / f"decode-ref-{updates}-joeynmt",
                               drop_output_bias=True)
    return joeynmt_decode_speed(config, tuple(SEARCHES.values()), threads=threads)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
