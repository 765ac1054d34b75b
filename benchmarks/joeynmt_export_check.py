"""Check that JoeyNMT 2.3 runs attnlab's reference model exactly, once exported by joeynmt_export.

For the reference model trained --updates updates (decode_speed.attnlab_model, cached), exported
as trained (JoeyNMT gets no output bias: it has none), and two exactly expressible twins: the
trained model with its output bias zeroed on both sides (the one part JoeyNMT cannot hold), and
a randomly initialised model without output bias (after a few updates the reference model says
"A man a a a ..." to everything; random weights give every sentence different pieces):

1. teacher forcing on the first 64 test sentences, tokenised by JoeyNMT's own pipeline (its
   sentencepiece tokenizer and voc_file) in its venv: the token ids must be attnlab's, and the
   logits JoeyNMT's model gives (+ the dropped bias) must be attnlab's, up to float rounding;
2. greedy decoding of test_2016_flickr (or its first --sentences) by `joeynmt test` against
   attnlab greedy, line by line and by BLEU. attnlab caps a sentence at int(1.5 * its source
   length); JoeyNMT caps a whole batch at int(1.5 * its longest source), so attnlab is also run
   with JoeyNMT's cap (same 64-sentence batches in file order) to compare like with like, and
   so is a plain argmax loop over attnlab's model.step (attnlab's greedy is beam search with
   one beam, which ranks float32 running sums: ties within their rounding, ~1e-4 once a random
   model's sum reaches -1000, may break the other way).

Usage:  PEERS_WORK=... python benchmarks/joeynmt_export_check.py [--updates 30] [--sentences N]
(needs the JoeyNMT venv and data of shared/peers/joeynmt/run.sh; one torch thread throughout).
"""

from __future__ import annotations

import argparse
import copy
import os
import subprocess
import sys
from pathlib import Path

import torch

# The JoeyNMT side of step 1, run by the JoeyNMT venv's python: CONFIG OUT DATA_PREFIX N.
JOEYNMT_FORCED = r"""
import sys
from pathlib import Path
import torch
from joeynmt.config import load_config, parse_global_args
from joeynmt.prediction import prepare
torch.set_num_threads(1)
config, out, prefix, n = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
cfg = load_config(config)
cfg["data"]["test"] = prefix
args = parse_global_args(cfg, rank=0, mode="test")
model, _, _, test = prepare(args, rank=0, mode="test")
model.eval()
model.loss_function = ("crossentropy", 0.0)
batch = next(iter(test.make_iter(batch_size=n, eos_index=model.eos_index,
                                 pad_index=model.pad_index)))
batch.sort_by_src_length()  # its packed encoder needs it
with torch.no_grad():
    logits = model._encode_decode(**vars(batch))[0]
    loss = model(return_type="loss", **vars(batch))[0]
torch.save({"indices": batch.indices, "src": batch.src, "src_length": batch.src_length,
            "trg": batch.trg, "trg_mask": batch.trg_mask.squeeze(1), "logits": logits,
            "nll_sum": float(loss)}, out)
"""


def joeynmt_forced(config: Path, sources: list[str], targets: list[str]) -> dict:
    """Step 1's JoeyNMT side: the pairs as one batch (JoeyNMT ids, sorted by source length,
    `indices` into the pairs) and its logits."""
    from joeynmt_export import joeynmt_python

    prefix, out = config.parent / "forced", config.parent / "forced.pt"
    for lang, lines in (("de", sources), ("en", targets)):
        Path(f"{prefix}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run([str(joeynmt_python()), "-", str(config), str(out), str(prefix),
                    str(len(sources))],
                   input=JOEYNMT_FORCED, text=True, check=True, capture_output=True,
                   env={**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    return torch.load(out)


def forced_check(model, vocabs, config: Path, sources: list[str], targets: list[str]) -> dict:
    """The pairs as one batch through JoeyNMT and attnlab: identical ids? max |logit
    difference| (JoeyNMT + the bias it lacks vs attnlab; and without the bias), NLL sums."""
    from attnlab.data import collate
    from joeynmt_export import joeynmt_pieces

    joey = joeynmt_forced(config, sources, targets)
    src_order, trg_order = joeynmt_pieces(vocabs.src)[1], joeynmt_pieces(vocabs.tgt)[1]
    rows = joey["indices"].tolist()
    pairs = [(vocabs.src.encode(sources[i]), vocabs.tgt.encode(targets[i])) for i in rows]
    batch = collate(pairs)
    joey_src = src_order[joey["src"][:, : batch.src.shape[1]]] * batch.src_mask
    joey_tgt = trg_order[joey["trg"][:, : batch.tgt_out.shape[1]]] * batch.tgt_mask
    with torch.no_grad():
        out = model(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_mask)
        nll = model.loss(out, batch.tgt_out, batch.tgt_mask).nll_sum
    ours = out.logits[:, trg_order]  # (N, V) in JoeyNMT's vocabulary order
    theirs = joey["logits"][joey["trg_mask"]]
    bias = model.decoder.output.proj.bias.detach()[trg_order]
    same_ids = ((joey_src == batch.src).all() and (joey_tgt == batch.tgt_out).all()
                and (joey["src_length"] == batch.src_lengths).all()
                and (joey["trg_mask"].sum(1) == batch.tgt_mask.sum(1)).all())
    return {"same_ids": bool(same_ids),
            "max_diff": float((theirs + bias - ours).abs().max()),
            "max_diff_without_bias": float((theirs - ours).abs().max()),
            "max_logit": float(ours.abs().max()), "nll_attnlab": nll,
            "nll_joeynmt": joey["nll_sum"], "tokens": int(batch.tgt_mask.sum())}


def argmax_tokens(model, src, src_mask, cap: int) -> list[list[int]]:
    """Greedy as JoeyNMT does it: each step the argmax of the logits (PAD, BOS excluded)."""
    from attnlab.data import BOS_ID, EOS_ID, PAD_ID

    with torch.no_grad():
        state = model.start(src, src_mask)
        token, steps = torch.full((src.shape[0],), BOS_ID), []
        while len(steps) < cap and not (steps and (torch.stack(steps) == EOS_ID).any(0).all()):
            logits, _, state = model.step(token, state)
            logits[:, [PAD_ID, BOS_ID]] = float("-inf")
            token = logits.argmax(-1)
            steps.append(token)
    rows = torch.stack(steps, 1).tolist()
    return [row[: row.index(EOS_ID) + 1] if EOS_ID in row else row for row in rows]


def greedy_joeynmt_cap(model, vocabs, sources: list[str], *, argmax: bool,
                       batch_size: int = 64) -> list[str]:
    """attnlab greedy with JoeyNMT's length rule: file-order batches, each capped at
    int(1.5 * its longest source, EOS included). argmax: a plain argmax loop instead of
    beam_search(beam_size=1), which ranks float32 running sums of log-probabilities."""
    from attnlab.data import collate
    from attnlab.decode import beam_search

    lines = []
    for start in range(0, len(sources), batch_size):
        batch = collate([(vocabs.src.encode(s), []) for s in sources[start: start + batch_size]])
        cap = int(1.5 * int(batch.src_lengths.max()))
        if argmax:
            tokens = argmax_tokens(model, batch.src, batch.src_mask, cap)
        else:
            found = beam_search(model, batch.src, batch.src_mask, beam_size=1, max_len=cap)
            tokens = [hypotheses[0].tokens for hypotheses in found]
        lines += [vocabs.tgt.decode(row) for row in tokens]
    return lines


def greedy_check(model, vocabs, config: Path, sources: list[str], reference: Path) -> dict:
    """`joeynmt test` greedy against attnlab greedy (its own cap, and JoeyNMT's cap)."""
    from attnlab.translation import DecodeConfig, translate
    from joeynmt_export import joeynmt_test, sacrebleu

    seconds, joey_file = joeynmt_test(config, 1, threads=1)
    theirs = joey_file.read_text(encoding="utf-8").splitlines()
    decode = DecodeConfig(beam=1, alpha=1.0, max_len_ratio=1.5, max_len_extra=0, batch_size=64)
    runs = {"attnlab, own cap": [r.text for r in translate(model, vocabs, sources, decode)],
            "attnlab, JoeyNMT cap": greedy_joeynmt_cap(model, vocabs, sources, argmax=False),
            "argmax loop, JoeyNMT cap": greedy_joeynmt_cap(model, vocabs, sources, argmax=True)}
    result = {"JoeyNMT BLEU": sacrebleu(joey_file, reference),
              "JoeyNMT sent/s": len(theirs) / seconds}
    for name, lines in runs.items():
        path = config.parent / f"greedy.{name.replace(' ', '_').replace(',', '')}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        same = sum(a == b for a, b in zip(lines, theirs, strict=True))
        result[f"{name}: identical"] = f"{same}/{len(lines)} = {same / len(lines):.1%}"
        result[f"{name}: BLEU"] = sacrebleu(path, reference)
    return result


def test_prefix(out: Path, sentences: int | None) -> Path:
    """The peer's test_2016_flickr, or its first `sentences` lines copied into out/."""
    from joeynmt_export import peers_work

    full = peers_work() / "data" / "multi30k" / "test_2016_flickr"
    if not Path(f"{full}.de").is_file():
        raise SystemExit(f"{full}.de not found: run shared/peers/joeynmt/run.sh first")
    if sentences is None:
        return full
    for lang in ("de", "en"):
        lines = Path(f"{full}.{lang}").read_text(encoding="utf-8").splitlines()[:sentences]
        (out / f"test.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out / "test"


def without_output_bias(model):
    """A copy of `model` whose output bias is zero (exactly what JoeyNMT computes)."""
    twin = copy.deepcopy(model)
    twin.decoder.output.proj.bias.data.zero_()
    return twin


def random_model(vocabs, seed: int = 0):
    """The reference model as initialised (seed), without output bias."""
    from attnlab.models import build_model
    from common import reference_model

    torch.manual_seed(seed)
    model = build_model(reference_model("luong", True), len(vocabs.src), len(vocabs.tgt))
    return without_output_bias(model.eval())


def arguments() -> argparse.ArgumentParser:
    from common import whole_number

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=whole_number(1), default=30)
    parser.add_argument("--sentences", type=whole_number(1, 1000), default=None,
                        help="the first N of the 1000 test sentences (default: all 1000)")
    parser.add_argument("--out", type=Path, default=None)
    return parser


def main() -> None:
    args = arguments().parse_args()
    torch.set_num_threads(1)
    import decode_speed
    from common import CACHE
    from joeynmt_export import export_to_joeynmt

    out = (args.out or CACHE / f"joeynmt-export-check-{args.updates}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    prefix = test_prefix(out, args.sentences)
    sources = Path(f"{prefix}.de").read_text(encoding="utf-8").splitlines()
    targets = Path(f"{prefix}.en").read_text(encoding="utf-8").splitlines()
    model, vocabs = decode_speed.attnlab_model(args.updates)
    variants = {"as-trained": model, "output-bias-zeroed": without_output_bias(model),
                "random-init-no-bias": random_model(vocabs)}
    for name, chosen in variants.items():
        config = export_to_joeynmt(chosen, vocabs, out / name, drop_output_bias=True,
                                   test_prefix=prefix)
        print(f"\n## {name} ({config})", flush=True)
        forced = forced_check(chosen, vocabs, config, sources[:64], targets[:64])
        # the same with each target said 4 times: 60-200 steps, as long as greedy outputs get
        longer = forced_check(chosen, vocabs, config, sources[:64],
                              [" ".join([t] * 4) for t in targets[:64]])
        forced.update({f"{key} (targets x4)": longer[key] for key in ("same_ids", "max_diff")})
        greedy = greedy_check(chosen, vocabs, config, sources, Path(f"{prefix}.en"))
        for key, value in {**forced, **greedy}.items():
            print(f"{key}: {value:.6g}" if isinstance(value, float) else f"{key}: {value}",
                  flush=True)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
