"""JoeyNMT 2.3 trained from a benchmark's config, in the venv that ../shared/peers/joeynmt/run.sh
makes, and read back from its log: median tokens/s, peak RSS, its parameter count and model.

    run_joeynmt(config, updates, threads, window) -> JoeyRun | None (None: said why, skipped)

`config` is a JoeyNMT YAML whose `@WORK@` stands for the peer's work folder ($PEERS_WORK,
default ~/.cache/attnlab-peers), filled in here as the peer's scripts do; the run's updates,
logging every `window` updates, no validation and a fresh model_dir are derived with the peer's
derive_cfg.py. The data (plain text and the joint 8k BPE) is made by the peer's prepare_data.py
if missing. Tokens/s are JoeyNMT's own "Tokens per Sec" log lines (real target tokens with
</s>, per second since the last line), the first left out as a warm-up.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

from common import DATA, PEERS

WORK = Path(os.environ.get("PEERS_WORK", Path.home() / ".cache" / "attnlab-peers"))
VENV = Path(os.environ.get("JOEYNMT_VENV", WORK / "joeynmt-venv"))
RATE = re.compile(r"joeynmt\.training - Epoch +\d+, Step: +\d+,.*Tokens per Sec: +(\d+)")


@dataclass(frozen=True)
class JoeyRun:
    """tokens/s median, low and high over the windows after the first; the model's class
    names as its summary prints them ("TransformerEncoder / TransformerDecoder")."""

    tokens_per_s: float
    low: float
    high: float
    peak_rss_mib: float
    parameters: int
    model: str
    log: Path


def run_joeynmt(config: Path, updates: int, threads: int, window: int) -> JoeyRun | None:
    python = VENV / "bin" / "python"
    if not python.is_file():
        print(f"(JoeyNMT's venv not found at {VENV}: run `bash {PEERS / 'run.sh'}` once, which "
              f"makes it; JoeyNMT skipped)")
        return None
    name = config.stem
    subprocess.run([str(python), str(PEERS / "prepare_data.py"), str(DATA / "multi30k"),
                    str(WORK / "data" / "multi30k")], check=True, capture_output=True)
    (WORK / "cfg").mkdir(parents=True, exist_ok=True)
    (WORK / "logs").mkdir(parents=True, exist_ok=True)
    base, derived = WORK / "cfg" / f"{name}.yaml", WORK / "cfg" / f"{name}-throughput.yaml"
    base.write_text(config.read_text(encoding="utf-8").replace("@WORK@", str(WORK)),
                    encoding="utf-8")
    subprocess.run([str(python), str(PEERS / "derive_cfg.py"), str(base), str(derived),
                    f"model_dir={WORK / 'joeynmt-models' / f'{name}-throughput'}",
                    f"training.updates={updates}", f"training.logging_freq={window}",
                    "training.validation_freq=100000"], check=True, capture_output=True)
    log, timing = WORK / "logs" / f"{name}-throughput.out", WORK / "logs" / f"{name}.time"
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(["/usr/bin/time", "-v", "-o", str(timing), str(python), "-m",
                               "joeynmt", "train", str(derived), "--skip-test"],
                              stdout=out, stderr=subprocess.STDOUT, env=env)
    return read_log(log, timing.read_text(encoding="utf-8"), done.returncode)


def read_log(log: Path, timing: str, returncode: int) -> JoeyRun | None:
    """The figures of a finished run, from its log and /usr/bin/time -v's report."""
    text = log.read_text(encoding="utf-8")
    rates = [float(rate) for rate in RATE.findall(text)][1:]  # the first window warms up
    params = re.search(r"joeynmt\.model - Total params: (\d+)", text)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing)
    if returncode != 0 or not rates or not params or not rss:
        print(f"(JoeyNMT's run failed (exit {returncode}, {len(rates)} windows after the "
              f"first): see {log}; JoeyNMT skipped)")
        return None
    parts = re.findall(r"^\s*(?:encoder|decoder)=(\w+)\(", text, re.M)
    return JoeyRun(statistics.median(rates), min(rates), max(rates),
                   int(rss.group(1)) / 1024, int(params.group(1)), " / ".join(parts), log)
