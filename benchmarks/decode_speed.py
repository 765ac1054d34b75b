"""Decoding speed on test_2016_flickr (de->en): sentences/s greedy and beam 5, batch 64, for the
reference model of benchmarks/train_throughput.py, side by side with JoeyNMT 2.3 on the identical
model trained for the same number of updates, in one run.

Both models are trained first (cached: attnlab in ~/.cache/attnlab-bench, JoeyNMT in
~/.cache/attnlab-peers) for --updates updates with the same settings (Adam 2e-4, batch 64), so
their outputs have similar lengths; the timing covers decoding only (no model loading).
Usage:  python benchmarks/decode_speed.py [--updates 300] [--no-joeynmt]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import torch

from attnlab.data import read_lines
from attnlab.eval import corpus_bleu
from attnlab.train import EarlyStoppingConfig, RunDir, TrainConfig, run_experiment
from attnlab.translation import DecodeConfig, RunConfig, TranslationTask, translate
from common import CACHE, DATA, PEERS, multi30k_config, reference_model


def attnlab_model(updates: int):
    """The reference model (luong + input feeding + additive = JoeyNMT's), trained once."""
    data = multi30k_config()
    data.valid_sentences = 100
    config = RunConfig(data=data, model=reference_model("luong", True),
                       train=TrainConfig(lr=2e-4, max_steps=updates, max_epochs=None,
                                         validate_every=updates, checkpoint_every=updates,
                                         early_stopping=EarlyStoppingConfig("bleu", "max")))
    config.loss.label_smoothing = 0.0
    run_dir = CACHE / f"decode-ref-{updates}"
    if not RunDir(run_dir).has_checkpoint("best"):
        print(f"training the attnlab reference model for {updates} updates ...", flush=True)
        run_experiment(TranslationTask, config, run_dir, progress=False, log=lambda _: None)
    task = TranslationTask(config, run_dir, log=lambda _: None)
    RunDir(run_dir).load_checkpoint("best", task.model)
    return task.model.eval(), task.vocabs


def time_attnlab(model, vocabs, sources, references, beam: int) -> tuple[float, float]:
    decode = DecodeConfig(beam=beam, alpha=1.0, max_len_ratio=1.5, max_len_extra=0,
                          batch_size=64)
    translate(model, vocabs, sources[:64], decode)  # warm-up
    start = time.perf_counter()
    outputs = translate(model, vocabs, sources, decode)
    seconds = time.perf_counter() - start
    return len(sources) / seconds, corpus_bleu([o.text for o in outputs], references)[0]


def joeynmt(updates: int) -> dict[int, tuple[float, float]]:
    """Train JoeyNMT's identical model for `updates` updates (validating once, to save a
    checkpoint), then run the peer's decode_speed.sh: beam -> (sentences/s, BLEU)."""
    work = Path(os.environ.get("PEERS_WORK", Path.home() / ".cache" / "attnlab-peers"))
    python = work / "joeynmt-venv" / "bin" / "python"
    model_dir = work / "joeynmt-models" / f"decode-ref-{updates}"
    if not (model_dir / "best.ckpt").exists():
        print(f"training JoeyNMT for {updates} updates (its venv and data via run.sh) ...",
              flush=True)
        subprocess.run(["bash", str(PEERS / "run.sh")], check=True, capture_output=True,
                       env={**os.environ, "UPDATES": "20"})  # venv, data, base config
        cfg = work / "cfg" / f"decode-ref-{updates}.yaml"
        subprocess.run([str(python), str(PEERS / "derive_cfg.py"), str(work / "cfg/base.yaml"),
                        str(cfg), f"model_dir={model_dir}", f"training.updates={updates}",
                        f"training.validation_freq={updates}", "training.logging_freq=100"],
                       check=True)
        subprocess.run([str(python), "-m", "joeynmt", "train", str(cfg), "--skip-test"],
                       check=True, capture_output=True,
                       env={**os.environ, "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"})
    result = subprocess.run(["bash", str(PEERS / "decode_speed.sh"), str(model_dir / "best.ckpt"),
                             f"ref{updates}", "1", "5"], check=True, capture_output=True, text=True)
    speeds = {}
    for line in result.stdout.splitlines():
        found = re.search(r"beam=(\d+) .*sents_per_s=([\d.]+).*sacrebleu=([\d.]+)", line)
        if found:
            speeds[int(found.group(1))] = (float(found.group(2)), float(found.group(3)))
    return speeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-joeynmt", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    test = DATA / "multi30k"
    sources = read_lines(test / "test_2016_flickr.de.gz")
    references = read_lines(test / "test_2016_flickr.en.gz")
    model, vocabs = attnlab_model(args.updates)
    peer = {} if args.no_joeynmt else joeynmt(args.updates)
    print(f"\nDecoding test_2016_flickr ({len(sources)} sentences), batch 64, {args.threads} "
          f"threads, models trained {args.updates} updates\n")
    print("| search | attnlab sent/s (BLEU) | JoeyNMT sent/s (BLEU) | ratio |\n|---|---|---|---|")
    for beam in (1, 5):
        ours, bleu = time_attnlab(model, vocabs, sources, references, beam)
        theirs = peer.get(beam)
        name = "greedy" if beam == 1 else f"beam {beam}"
        peer_cell = f"{theirs[0]:.1f} ({theirs[1]:.1f})" if theirs else "-"
        ratio = f"{ours / theirs[0]:.2f}x" if theirs else "-"
        print(f"| {name} | {ours:.1f} ({bleu:.1f}) | {peer_cell} | {ratio} |", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
