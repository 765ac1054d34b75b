"""`attnlab serve` under load: 50 concurrent clients x 20 translate requests, then the same 1,000
requests from one client, one at a time, against one server process.

A small dates run (the shipped dates-bahdanau config, shortened) is trained once and cached under
--cache; the server runs as `attnlab serve` on 127.0.0.1 (a free port) in a subprocess, its
request log in CACHE/serve.log. Printed: errors by status, p50/p95 latency and sentences/s of
both phases, their ratio, and the server's peak RSS (VmHWM).

Also printed per phase: the achieved GFLOP/s of the decoding (the matrix-product FLOPs of the
same requests, counted by torch.utils.flop_counter in this process, not timed, with the server's
own answer_batch on the same run, over the phase's wall time) and its share of this machine's
fp32 GEMM rate (common.gemm_rate: torch.mm 1024^3, measured in this process at the server's
thread count: torch's default, which the server inherits with this environment). The count
decodes the batched phase in batches of `clients` consecutive requests (at most the server's
max_batch), one per client, as they are sent; the server forms its batches as requests arrive,
so that count is a close estimate; the one-at-a-time count is exact.

Usage:  OMP_NUM_THREADS=1 python benchmarks/serve_load.py [--clients 50 --requests 20 --beam 5]
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

from attnlab.config import load_config
from attnlab.configs import config_path
from attnlab.data import write_dates
from attnlab.serve.limits import Limits
from attnlab.serve.runs import load_served
from attnlab.serve.work import answer_batch
from attnlab.train import RunDir, run_experiment
from attnlab.translation import RunConfig, TranslationTask
from attnlab.translation.run import TranslateRequest
from common import gemm_rate, matmul_flops, whole_number


def dates_run(cache: Path, steps: int) -> Path:
    """The dates run (trained once per step count), and its data's test split."""
    data, run = cache / "dates", cache / f"dates-run-{steps}"
    if not (data / "test.src").is_file():
        write_dates(data, size=12000, seed=7)
    if not RunDir(run).has_checkpoint("last"):
        print(f"training a dates run for {steps} updates ...", flush=True)
        config = load_config(config_path("dates-bahdanau"), RunConfig, overrides=[
            f"data.dir={data}", f"train.max_steps={steps}", "train.max_epochs=null",
            f"train.validate_every={steps}", f"train.checkpoint_every={steps}",
            "train.tensorboard=false", "data.valid_sentences=200"])
        run_experiment(TranslationTask, config, run, progress=False, log=lambda _: None)
    return run


def decoding_flops(run: Path, beam: int, batches: list[list[str]]) -> int:
    """Matrix-product FLOPs of the server's work on `batches`, each decoded as one batch by its
    answer_batch (n-best 1, word level: the request defaults) on the same loaded run."""
    served = load_served("dates", run)

    def decode() -> None:
        for texts in batches:
            answer_batch(served, [TranslateRequest(run="dates", text=text, beam=beam)
                                  for text in texts])

    with torch.no_grad():  # as the server's worker
        return matmul_flops(decode)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(run: Path, port: int, log: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "attnlab", "serve", "--run", f"dates={run}",
               "--port", str(port)]
    server = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}; see {log}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/api/runs")
            if connection.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit(f"the server did not answer within 120 s; see {log}")


class Client:
    """One keep-alive connection posting translate requests: (status, seconds) per request."""

    def __init__(self, port: int, beam: int):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.beam = beam

    def translate(self, text: str) -> tuple[int, float]:
        body = json.dumps({"run": "dates", "text": text, "beam": self.beam})
        started = time.perf_counter()
        self.connection.request("POST", "/api/translate", body,
                                {"Content-Type": "application/json"})
        response = self.connection.getresponse()
        response.read()
        return response.status, time.perf_counter() - started


def phase(port: int, beam: int, batches: list[list[str]]) -> tuple[list, float]:
    """Each list of sentences posted by its own client, all clients at once."""
    def client(sentences):
        worker = Client(port, beam)
        return [worker.translate(text) for text in sentences]

    started = time.perf_counter()
    with ThreadPoolExecutor(len(batches)) as pool:
        results = [r for rs in pool.map(client, batches) for r in rs]
    return results, time.perf_counter() - started


def report(name: str, results: list, seconds: float, flops: int, gemm: float) -> float:
    statuses = collections.Counter(status for status, _ in results)
    errors = {status: count for status, count in statuses.items() if status != 200}
    latencies = sorted(latency * 1000 for _, latency in results)
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    rate = statuses[200] / seconds
    achieved = flops / seconds / 1e9
    print(f"{name:<22} {len(results):>5} requests  errors {errors or 'none'}  "
          f"p50 {statistics.median(latencies):7.1f} ms  p95 {p95:7.1f} ms  "
          f"{rate:7.1f} sentences/s  {achieved:6.2f} GFLOP/s ({achieved / gemm:.1%} of GEMM)  "
          f"({seconds:.1f} s)")
    return rate


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path,
                        default=Path.home() / ".cache" / "attnlab" / "serve-bench")
    parser.add_argument("--clients", type=whole_number(1), default=50)
    parser.add_argument("--requests", type=whole_number(1), default=20, help="per client")
    parser.add_argument("--beam", type=whole_number(1, Limits().max_beam), default=5,
                        help=f"at most the server's limit, {Limits().max_beam}")
    parser.add_argument("--steps", type=whole_number(1), default=300,
                        help="training updates of the run")
    return parser


def main() -> None:
    args = arguments().parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    threads = torch.get_num_threads()  # torch's default: the server's, as it gets no --threads
    run = dates_run(args.cache, args.steps)
    total = args.clients * args.requests
    sentences = (args.cache / "dates" / "test.src").read_text(encoding="utf-8").splitlines()
    sentences = (sentences * (total // len(sentences) + 1))[:total]
    chunks = [sentences[i::args.clients] for i in range(args.clients)]
    # Client i's r-th request is sentences[i + r * clients]: round r sends one slice of them,
    # which the server decodes in batches of at most max_batch (it gets the default limits).
    width = min(args.clients, Limits().max_batch)
    rounds = [sentences[i : i + width] for i in range(0, total, width)]
    flops_together = decoding_flops(run, args.beam, rounds)
    flops_alone = decoding_flops(run, args.beam, [[text] for text in sentences])
    torch.set_num_threads(threads)  # training the run may have changed it
    gemm = gemm_rate()
    log = args.cache / "serve.log"
    server = start_server(run, free_port(), log)
    port = int(server.args[-1])
    try:
        phase(port, args.beam, [sentences[:20]])  # warm-up
        print(f"threads: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')} "
              f"(torch: {threads}); beam {args.beam}; {os.cpu_count()} CPUs; server log {log}")
        print(f"fp32 GEMM rate (torch.mm 1024^3, {threads} thread(s)) {gemm:.1f} GFLOP/s; "
              f"decoding FLOPs (matrix products) {flops_together / 1e9:.2f} GFLOP in batches of "
              f"{width}, {flops_alone / 1e9:.2f} GFLOP one at a time")
        together = report(f"{args.clients} clients at once", *phase(port, args.beam, chunks),
                          flops_together, gemm)
        alone = report("one at a time", *phase(port, args.beam, [sentences]), flops_alone, gemm)
        print(f"batched / one-at-a-time throughput: {together / alone:.1f}x")
        print(f"server peak RSS (VmHWM): {peak_rss_mib(server.pid):.0f} MiB")
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
