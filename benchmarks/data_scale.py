"""Training from a WMT-size corpus, simulated: the memory-mapped store's encode time and size,
and what a training process that reads it costs in memory and start-up time.

For each --pairs N (default 1M and 4.5M, WMT'14 English-German's size) it writes a synthetic
parallel corpus into a temporary folder (never kept): Zipf-distributed words from a 40k-word
vocabulary per side with umlauts, source lengths log-normal with median 18 and mean 22 words
(WMT'14 en-de's shape), each target 0.85-1.2 times its source. Then, with the cache in that
folder, a tiny Luong model (16-dim, joint 8k BPE, batches of 2,000 tokens, one thread):

  first start    `attnlab train` of a new run: trains the vocabularies and encodes the store
                 (worker processes), then a few updates
  second start   another new run on the same files: vocabularies and store reused; the time
                 from the command's start to its first update
  resume         `attnlab train --resume` of the first run (mid-epoch): the time from the
                 command's start to its next update
and for each its peak RSS (its own process, measured inside it: workers not included), also
just before its first update (the step's activations depend on the first batch drawn), beside
a baseline start on 2,000 pairs held in memory (what any start costs: imports, model). The
sampler's batches/s (an epoch's batches computed, then iterated, and collated from the maps)
is printed beside the updates/s training consumes. Usage:

    python benchmarks/data_scale.py [--pairs 1000000 4500000] [--tmp DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from common import whole_number

CHILD = """
import json, resource, sys
from attnlab.cli import main
from attnlab.train import loop

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

# The peak before the first update: data, model and optimiser, without the step's activations
# (which depend on the first batch drawn, not on the corpus's size).
before = []
step = loop.Trainer._train_step
def first_step(self, indices):
    before.append(before[0] if before else peak())
    return step(self, indices)
loop.Trainer._train_step = first_step
code = main(sys.argv[1:])
print("PEAK_RSS=" + json.dumps([peak(), before[0] if before else None]), flush=True)
sys.exit(code)
"""
SYLLABLES = ["an", "be", "chen", "der", "ei", "für", "ge", "hal", "ich", "keit", "lä", "mon",
             "ne", "ö", "pro", "qu", "ri", "sch", "te", "ung", "ver", "wo", "xy", "zü", "al",
             "st", "or", "en", "is", "ut"]
WORDS = 40_000
CHUNK = 100_000


def vocabulary(rng: np.random.Generator) -> np.ndarray:
    """WORDS distinct words of 1-4 syllables, as an object array."""
    words: set[str] = set()
    while len(words) < WORDS:
        count = int(rng.integers(1, 5))
        words.add("".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), count)))
    return np.array(sorted(words), dtype=object)


def write_side(path: Path, chunks: list[np.ndarray], rng: np.random.Generator,
               words: np.ndarray) -> None:
    """One line per length in `chunks` (arrays of words per line), words drawn Zipf (s = 1.1)."""
    cdf = np.cumsum(1.0 / np.arange(1, WORDS + 1) ** 1.1)
    cdf /= cdf[-1]
    with open(path, "w", encoding="utf-8") as file:
        for lengths in chunks:
            tokens = words[np.searchsorted(cdf, rng.random(int(lengths.sum())))]
            gaps = np.full(len(tokens), " ", dtype=object)
            gaps[np.cumsum(lengths) - 1] = "\n"
            text = np.empty(2 * len(tokens), dtype=object)
            text[0::2], text[1::2] = tokens, gaps
            file.write("".join(text.tolist()))


def write_corpus(folder: Path, pairs: int, seed: int = 0) -> None:
    """train.de/train.en (`pairs` lines) and val.de/val.en (200 lines) in `folder`."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    words = {side: vocabulary(rng) for side in ("de", "en")}
    for split, count in (("train", pairs), ("val", 200)):
        chunks = -(-count // CHUNK)
        sources = [np.clip(np.rint(rng.lognormal(2.9, 0.65, min(CHUNK, count - c * CHUNK))),
                           1, 250).astype(np.int64) for c in range(chunks)]
        targets = [np.maximum(1, np.rint(s * rng.uniform(0.85, 1.2, len(s)))).astype(np.int64)
                   for s in sources]
        write_side(folder / f"{split}.de", sources, rng, words["de"])
        write_side(folder / f"{split}.en", targets, rng, words["en"])


def config(folder: Path, steps: int, store: str = "memmap") -> Path:
    data = {
        "data": {"dir": str(folder / "corpus"), "train": "train", "valid": "val", "test": "val",
                 "src_lang": "de", "tgt_lang": "en", "vocab": "bpe", "vocab_size": 8000,
                 "joint_vocab": True, "max_len": 100, "batch_size": 2000,
                 "batch_unit": "tokens", "valid_sentences": 10, "store": store},
        "model": {"encoder": {"embedding_dim": 16, "hidden_dim": 16},
                  "decoder": {"kind": "luong", "embedding_dim": 16, "hidden_dim": 16,
                              "attention": {"score": "general"}}},
        "train": {"max_steps": steps, "max_epochs": None, "validate_every": None,
                  "checkpoint_every": steps, "log_every": 1, "threads": 1,
                  "tensorboard": False},
        "decode": {"max_len_ratio": 0.0, "max_len_extra": 5, "batch_size": 10},
    }
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def train_steps(run: Path) -> list[dict]:
    path = run / "metrics.jsonl"
    if not path.is_file():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if r["kind"] == "train"]


def attnlab_train(args: list[str], run: Path, env: dict) -> dict:
    """Run `attnlab train ARGS` in a child; the seconds from its start to its first new update
    (polled in metrics.jsonl), its whole time, peak RSS and output."""
    before = len(train_steps(run))
    start = time.monotonic()
    process = subprocess.Popen([sys.executable, "-c", CHILD, "train", *args, "--quiet"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    first_update = None
    while process.poll() is None:
        if first_update is None and len(train_steps(run)) > before:
            first_update = time.monotonic() - start
        time.sleep(0.02)
    total = time.monotonic() - start
    output = process.stdout.read() if process.stdout else ""
    if process.returncode != 0:
        raise SystemExit(f"attnlab train {' '.join(args)} failed:\n{output}")
    if first_update is None:   # the update and the exit fell between two polls
        first_update = total
    peak, before = json.loads(re.findall(r"PEAK_RSS=(.+)", output)[-1])
    return {"first_update_s": first_update, "total_s": total, "peak_rss": peak,
            "peak_rss_before_update": before, "output": output}


def seconds(output: str, what: str) -> float | None:
    match = re.search(rf"{what}: .* \((?:trained|encoded) in ([\d.]+) s\)", output)
    return float(match[1]) if match else None


def sampler_rates(store_folder: Path, consumed: float) -> dict:
    """An epoch's batches computed (s), iterated (batches/s) and collated from the maps."""
    from attnlab.data import BucketBatchSampler, PairStore

    store = PairStore(store_folder)
    start = time.perf_counter()
    sampler = BucketBatchSampler(store.lengths() + 1, 2000, batch_unit="tokens", seed=1)
    count = len(sampler)   # computes the epoch
    epoch_s = time.perf_counter() - start
    start = time.perf_counter()
    batches = list(sampler)
    iterate = len(batches) / (time.perf_counter() - start)
    sample = batches[:: max(1, len(batches) // 2000)]
    start = time.perf_counter()
    for indices in sample:
        store.batch(indices)
    collate = len(sample) / (time.perf_counter() - start)
    return {"batches": count, "epoch_s": epoch_s, "iterate_per_s": iterate,
            "collate_per_s": collate, "consumed_per_s": consumed}


def measure(pairs: int, tmp: str | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="attnlab-data-scale-", dir=tmp) as scratch:
        folder = Path(scratch)
        start = time.monotonic()
        write_corpus(folder / "corpus", pairs)
        generated = time.monotonic() - start
        text_bytes = sum(p.stat().st_size for p in (folder / "corpus").glob("train.*"))
        env = {**os.environ, "ATTNLAB_CACHE": str(folder / "cache"), "OMP_NUM_THREADS": "1"}
        first = attnlab_train([str(config(folder, 3)), "--run", str(folder / "a")],
                              folder / "a", env)
        second = attnlab_train([str(config(folder, 3)), "--run", str(folder / "b")],
                               folder / "b", env)
        resumed = attnlab_train(["--run", str(folder / "a"), "--resume", "--set",
                                 "train.max_steps=6"], folder / "a", env)
        store_folder = next((folder / "cache" / "pairs").glob("*/manifest.json")).parent
        store_bytes = sum(p.stat().st_size for p in store_folder.iterdir())
        steps = [r["ms_per_step"] for r in train_steps(folder / "b")[1:]]
        consumed = 1000 / float(np.median(steps)) if steps else float("nan")
        return {"pairs": pairs, "generate_s": generated, "text_bytes": text_bytes,
                "vocab_s": seconds(first["output"], "vocabularies"),
                "encode_s": seconds(first["output"], "training pairs"),
                "store_bytes": store_bytes, "first": first, "second": second,
                "resumed": resumed, "sampler": sampler_rates(store_folder, consumed)}


def baseline(tmp: str | None) -> dict:
    """The same command on 2,000 pairs held in memory: what a start costs whatever the data
    (imports, the model, the optimiser, the first update)."""
    with tempfile.TemporaryDirectory(prefix="attnlab-data-scale-", dir=tmp) as scratch:
        folder = Path(scratch)
        write_corpus(folder / "corpus", 2000)
        env = {**os.environ, "ATTNLAB_CACHE": str(folder / "cache"), "OMP_NUM_THREADS": "1"}
        run = attnlab_train([str(config(folder, 3, "memory")), "--run", str(folder / "a")],
                            folder / "a", env)
        run.pop("output")
        return run


def report(results: list[dict], base: dict) -> None:
    gib = 2**30
    kinds = ("first", "second", "resumed")
    print("| pairs | text | vocab (once) | encode (once) | store on disk | second start: to "
          "first update | resume: to next update |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['pairs']:,} | {r['text_bytes'] / gib:.2f} GiB | {r['vocab_s']:.0f} s | "
              f"{r['encode_s']:.0f} s | {r['store_bytes'] / gib:.2f} GiB | "
              f"{r['second']['first_update_s']:.1f} s | {r['resumed']['first_update_s']:.1f} s |")
    print("\n| pairs | peak RSS, first start / second start / resume | of which before the "
          "first update |")
    print("|---|---|---|")
    for r in results:
        whole = " / ".join(f"{r[k]['peak_rss'] / gib:.2f}" for k in kinds)
        before = " / ".join(f"{r[k]['peak_rss_before_update'] / gib:.2f}" for k in kinds)
        print(f"| {r['pairs']:,} | {whole} GiB | {before} GiB |")
    print("\n| pairs | batches/epoch | epoch computed | sampler batches/s | collated from the "
          "maps, batches/s | training consumes, batches/s | sampler / training |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        s = r["sampler"]
        print(f"| {r['pairs']:,} | {s['batches']:,} | {s['epoch_s']:.2f} s | "
              f"{s['iterate_per_s']:,.0f} | {s['collate_per_s']:,.0f} | "
              f"{s['consumed_per_s']:.1f} | {s['iterate_per_s'] / s['consumed_per_s']:,.0f}x |")
    if len(results) > 1:
        low, high = results[0], results[-1]
        for kind in ("second", "resumed"):
            ratios = [high[kind][key] / low[kind][key]
                      for key in ("peak_rss", "peak_rss_before_update")]
            print(f"\npeak RSS, {kind} start, {high['pairs']:,} vs {low['pairs']:,} pairs: "
                  f"{ratios[0]:.2f}x (before the first update {ratios[1]:.2f}x)")
    print(f"\nbaseline, 2,000 pairs in memory: {base['first_update_s']:.1f} s to the first "
          f"update, peak RSS {base['peak_rss'] / gib:.2f} GiB "
          f"({base['peak_rss_before_update'] / gib:.2f} before it)")
    for r in results:
        print(f"\n{r['pairs']:,} pairs: corpus generated in {r['generate_s']:.0f} s; the "
              f"first start took {r['first']['total_s']:.0f} s in all, the resumed command "
              f"{r['resumed']['total_s']:.1f} s to its exit")


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # a corpus of fewer pairs than the baseline's 2,000 measures nothing the baseline does not
    parser.add_argument("--pairs", type=whole_number(2_000), nargs="+",
                        default=[1_000_000, 4_500_000],
                        help="corpus sizes in sentence pairs, each at least 2000")
    parser.add_argument("--tmp", help="where the temporary corpus and cache go (default: the "
                        "system's temporary folder)")
    parser.add_argument("--json", help="also write the figures to this file")
    return parser


def main() -> None:
    args = arguments().parse_args()
    base = baseline(args.tmp)
    results = []
    for pairs in args.pairs:
        print(f"{pairs:,} pairs ...", file=sys.stderr, flush=True)
        results.append(measure(pairs, args.tmp))
    report(results, base)
    if args.json:
        for r in results:
            for kind in ("first", "second", "resumed"):
                r[kind].pop("output")
        Path(args.json).write_text(json.dumps({"baseline": base, "results": results},
                                              indent=1) + "\n")


if __name__ == "__main__":
    main()
