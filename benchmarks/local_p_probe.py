"""Probe a trained local-p run: where does its position network put the window, and does it matter?

Luong et al. 2015's local-p attention predicts a centre p_t = S sigmoid(v_p^T tanh(W_p h_t))
(eq. 9) and scores only [p_t - D, p_t + D], the in-window softmax times
exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D/2 (eq. 10). This script reads a trained run and prints
(a)-(d) below:

    python benchmarks/local_p_probe.py RUN [--global RUN] [--data DIR] [--split val]
        [--sentences 500] [--batches 5] [--parts abcd] [--png FILE.png] [--plot 4] [--title T]
    python benchmarks/local_p_probe.py RUN_AT_STEP_10 RUN_AT_STEP_20 ...   # a trajectory

RUN is a run directory (attnlab train ... --run RUN) whose decoder uses mechanism local-p.
--data replaces the run's data.dir (where the split files, and for dates the .align file, lie).
One thread (torch.set_num_threads(1)); under a minute on the dates task and on Multi30k.

(a) centres: the predicted p_t during forced decoding of the references against a reference
    position per target step: the gold alignment (the dates task's `{split}.align`: the mean
    source position of the characters a target character is linked to), else the argmax of a
    global model's forced attention (`--global RUN`), else the diagonal t (S - 1) / (T - 1).
    Mean |p_t - ref|, Pearson r, how often ref lies inside the window, beside p_t = S/2 (what
    an untrained position network gives) and the in-window attention's argmax; how much of the
    attention and of the p_t sit at the source's end; --png draws p_t, the window and ref over
    the attention of a few sentences;
(b) gradients: over a few training batches (train mode, the run's loss), the gradient norm of
    W_p and v_p against the other parameter groups (|g| and |g| / |w|), for the trained model
    and for the initial one; dL/dp_t: its size, how often gradient descent would move p_t
    towards ref, and its net push (sum(-dL/dp_t) / sum |dL/dp_t|: > 0 moves every p_t right);
(c) initialisation: sigma = D/2 read off the module's Gaussian, and the gate
    sigmoid(v_p^T tanh(W_p h_t)) of a fresh model seeded as training seeds it (train.seed):
    saturated, or all near 1/2 (p_t near S/2)? The same statistics for the trained model;
(d) oracle: the teacher-forced loss (NLL per token) and token accuracy with the model's p_t,
    with p_t = ref (the oracle centre), with p_t = S/2 and with the diagonal; with --global, the
    global model's too.

Several runs (checkpoints of one training, each copied into a run directory of its own): one
line each instead of (a)-(d), gate statistics and |p_t - ref| by update.

Nothing in the library changes: the probe wraps the LocalAttention instance's `centres` method to
read (and, for (d), replace) p_t. A variant with a diagonal prior,
p_t = S sigmoid(v_p^T tanh(W_p h_t) + logit((t + 1/2) / (S + 1))) (p_t starts near t, as
local-m's centre, instead of at S/2), is trained and probed in this process only, by patching
LocalAttention.centres here:

    python benchmarks/local_p_probe.py train-diagonal-prior CONFIG --run DIR [--set ...]
    python benchmarks/local_p_probe.py DIR --diagonal-prior ...

(the first is `attnlab train` with the patch; the run's config still says local-p, so probe it
only through this script with --diagonal-prior).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from attnlab.attention import LocalAttention
from attnlab.attention.window_weights import as_dense
from attnlab.data import Batch, collate
from attnlab.models import Seq2Seq, build_model
from attnlab.train import seed_everything
from attnlab.translation import TranslationRun
from attnlab.translation.corpus import read_split, split_paths
from common import whole_number

Override = Callable[[Tensor, int], Tensor]  # (model p_t (B, Tq), first step) -> p_t


def local_attention(model: torch.nn.Module) -> LocalAttention:
    found = [m for m in model.modules() if isinstance(m, LocalAttention) and m.predictive]
    if len(found) != 1:
        raise SystemExit("the run's model has no local-p attention (mechanism: local-p)")
    return found[0]


@contextmanager
def watched(local: LocalAttention, override: Override | None = None,
            keep_grad: bool = False) -> Iterator[list[Tensor]]:
    """Record every p_t the module computes (a list of (B, Tq) tensors in call order); with
    `override`, the module uses what it returns instead. Restores the method afterwards."""
    calls: list[Tensor] = []
    original = local.centres

    def centres(query: Tensor, lengths: Tensor, offset: int | Tensor) -> Tensor:
        p = original(query, lengths, offset)
        if keep_grad and p.requires_grad:
            p.retain_grad()
        if override is not None:
            p = override(p, int(offset))
        calls.append(p)
        return p

    local.centres = centres  # type: ignore[method-assign,unused-ignore]  # undone below
    try:
        yield calls
    finally:
        del local.centres


def joined(calls: list[Tensor]) -> Tensor:
    return torch.cat([c.detach() for c in calls], dim=1)  # (B, T)


# --- reference positions --------------------------------------------------------------------------

def gold_positions(align_line: str, target_length: int) -> list[float]:
    """Per target character: the mean source position it is linked to, NaN when unlinked."""
    linked: dict[int, list[int]] = {}
    for link in align_line.split():
        s, t = link.split("-")
        linked.setdefault(int(t), []).append(int(s))
    return [float(np.mean(linked[t])) if t in linked else math.nan for t in range(target_length)]


class Examples:
    """Encoded (source, target) pairs with a reference position per target step (NaN: none)."""

    def __init__(self, run: TranslationRun, pairs: list[tuple[str, str]]):
        self.run, self.pairs = run, pairs
        self.encoded = [(run.vocabs.src.encode(s), run.vocabs.tgt.encode(t)) for s, t in pairs]
        self.reference: list[np.ndarray] = []
        self.reference_name = ""

    def batches(self, size: int) -> Iterator[tuple[slice, Batch]]:
        for start in range(0, len(self.encoded), size):
            chunk = slice(start, start + size)
            yield chunk, collate(self.encoded[chunk])

    def reference_matrix(self, chunk: slice, steps: int) -> Tensor:
        rows = self.reference[chunk]
        out = torch.full((len(rows), steps), math.nan)
        for b, row in enumerate(rows):
            n = min(len(row), steps)
            out[b, :n] = torch.as_tensor(row[:n], dtype=torch.float32)
        return out


def add_gold(examples: Examples, align_path: Path) -> None:
    lines = align_path.read_text(encoding="utf-8").splitlines()[: len(examples.pairs)]
    for (source, target), (src_ids, tgt_ids), line in zip(examples.pairs, examples.encoded, lines,
                                                          strict=True):
        if len(src_ids) != len(source) or len(tgt_ids) != len(target):
            raise SystemExit("the gold links characters: this run's vocabulary is not char")
        gold = gold_positions(line, len(target))
        examples.reference.append(np.array([*gold, math.nan]))  # the </s> step: no link
    examples.reference_name = f"gold alignment ({align_path.name})"


def add_global_argmax(examples: Examples, global_run: TranslationRun) -> None:
    for chunk, batch in examples.batches(64):
        with torch.no_grad():
            out = global_run.model.all_positions(batch.src, batch.src_mask, batch.tgt_in)
        argmax = as_dense(out.attention, batch.src.shape[1]).argmax(-1).float()  # (B, T)
        for b, (_, tgt_ids) in enumerate(examples.encoded[chunk]):
            row = argmax[b, : len(tgt_ids) + 1].numpy().copy()
            row[-1] = math.nan  # the </s> step is left out, as for the gold
            examples.reference.append(row)
    examples.reference_name = (f"argmax of the global model's forced attention "
                               f"({global_run.path})")


def add_diagonal(examples: Examples) -> None:
    for src_ids, tgt_ids in examples.encoded:
        steps = len(tgt_ids)
        row = [t * (len(src_ids) - 1) / max(steps - 1, 1) for t in range(steps)]
        examples.reference.append(np.array([*row, math.nan]))
    examples.reference_name = "the diagonal t (S - 1) / (T - 1) (S, T: real tokens, no EOS)"


# --- forced decoding ------------------------------------------------------------------------------

def forced(model: Seq2Seq, local: LocalAttention | None, examples: Examples,
           centre: str = "model") -> dict[str, np.ndarray | float]:
    """Teacher-forced pass over every example in eval mode with p_t from `centre` (model, oracle,
    middle, diagonal) -> pooled p_t, ref, S, step, window-argmax arrays and loss/accuracy."""
    model.eval()
    out_p, out_ref, out_len, out_argmax, out_mass, out_step, out_eos = [], [], [], [], [], [], []
    nll_sum, correct, tokens = 0.0, 0, 0
    for chunk, batch in examples.batches(64):
        steps = batch.tgt_in.shape[1]
        ref = examples.reference_matrix(chunk, steps)
        lengths = batch.src_mask.sum(-1).float()  # real keys, EOS included
        override = None
        if centre != "model":
            override = centre_override(centre, ref, lengths, batch.tgt_mask.sum(-1).float())
        with torch.no_grad():
            if local is None:
                out = model.all_positions(batch.src, batch.src_mask, batch.tgt_in)
                p = torch.full(ref.shape, math.nan)
            else:
                with watched(local, override) as calls:
                    out = model.all_positions(batch.src, batch.src_mask, batch.tgt_in)
                p = joined(calls)
        logp = torch.log_softmax(out.logits, -1)
        mask = batch.tgt_mask
        nll_sum += float(-logp.gather(-1, batch.tgt_out.unsqueeze(-1)).squeeze(-1)[mask].sum())
        correct += int((logp.argmax(-1) == batch.tgt_out)[mask].sum())
        tokens += int(mask.sum())
        real = mask.clone()
        out_p.append(p[real].numpy())
        out_ref.append(ref[real].numpy())
        out_len.append(lengths.unsqueeze(1).expand_as(real)[real].numpy())
        # local attention returns window weights since the window kernels: dense (B, T, S) here
        attention = as_dense(out.attention, batch.src.shape[1])
        out_argmax.append(attention.argmax(-1)[real].float().numpy())
        out_mass.append(attention.sum(-1)[real].numpy())
        eos = (lengths.long() - 1).view(-1, 1, 1).expand(-1, steps, 1)  # (B, T, 1)
        out_eos.append(attention.gather(-1, eos).squeeze(-1)[real].numpy())
        out_step.append(torch.arange(steps).expand_as(real)[real].float().numpy())
    return {
        "p": np.concatenate(out_p), "ref": np.concatenate(out_ref),
        "length": np.concatenate(out_len), "argmax": np.concatenate(out_argmax),
        "mass": np.concatenate(out_mass), "step": np.concatenate(out_step),
        "eos": np.concatenate(out_eos),
        "nll": nll_sum / tokens, "accuracy": correct / tokens,
    }


def centre_override(centre: str, ref: Tensor, lengths: Tensor, target_lengths: Tensor) -> Override:
    """p_t replaced by the reference (where there is one), S/2, or the diagonal."""
    def override(p: Tensor, first: int) -> Tensor:
        queries = p.shape[1]
        if centre == "oracle":
            wanted = ref[:, first : first + queries]
            return torch.where(torch.isnan(wanted), p, wanted)
        if centre == "middle":
            return ((lengths - 1) / 2).unsqueeze(1).expand_as(p)
        if centre == "diagonal":
            steps = torch.arange(first, first + queries, dtype=p.dtype)
            # lengths and target_lengths count EOS: the last real target token faces the last
            # real source token, as in add_diagonal
            scale = (lengths - 2).clamp(min=0) / (target_lengths - 2).clamp(min=1)  # (B,)
            return steps.unsqueeze(0) * scale.unsqueeze(1)
        raise ValueError(centre)
    return override


def position_stats(p: np.ndarray, ref: np.ndarray, window: int) -> tuple[float, float, float]:
    """Mean |p - ref|, Pearson r, share of steps whose ref lies in [round(p) - D, round(p) + D]."""
    keep = ~np.isnan(ref) & ~np.isnan(p)
    p, ref = p[keep], ref[keep]
    r = float(np.corrcoef(p, ref)[0, 1]) if p.std() > 0 and ref.std() > 0 else math.nan
    inside = float(np.mean(np.abs(np.round(p) - ref) <= window))
    return float(np.mean(np.abs(p - ref))), r, inside


# --- gradients --------------------------------------------------------------------------------

GROUPS = (
    ("W_p (position_proj)", "decoder.attention.mechanism.position_proj"),
    ("v_p (position_v)", "decoder.attention.mechanism.position_v"),
    ("W_a (general score)", "decoder.attention.mechanism.score"),
    ("decoder RNN", "decoder.rnn"),
    ("W_c (combine)", "decoder.combine"),
    ("output layer", "decoder.output"),
    ("encoder", "encoder"),
)


def gradient_probe(run: TranslationRun, model: Seq2Seq, examples: Examples,
                   batches: int) -> dict[str, object]:
    """Mean over `batches` training batches of each group's |grad|, |w|, and dL/dp_t."""
    local = local_attention(model)
    model.train()
    sums: dict[str, list[float]] = {name: [0.0, 0.0] for name, _ in GROUPS}
    dp_abs, toward, counted, right, nonzero = [], 0, 0, 0, 0
    net, total = 0.0, 0.0  # sum of -dL/dp_t and of its size: the push all the p_t share
    smoothing = run.config.loss.label_smoothing
    for k, (chunk, batch) in enumerate(examples.batches(run.config.data.batch_size)):
        if k == batches:
            break
        model.zero_grad()
        with watched(local, keep_grad=True) as calls:
            out = model(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_mask)
            loss = model.loss(out, batch.tgt_out, batch.tgt_mask, smoothing).loss
            loss.backward()
        for name, prefix in GROUPS:
            grads = [p.grad.norm() ** 2 for n, p in model.named_parameters()
                     if n.startswith(prefix) and p.grad is not None]
            weights = [p.detach().norm() ** 2 for n, p in model.named_parameters()
                       if n.startswith(prefix)]
            sums[name][0] += float(torch.stack(grads).sum().sqrt()) if grads else 0.0
            sums[name][1] += float(torch.stack(weights).sum().sqrt()) if weights else 0.0
        grad_p = torch.cat([c.grad if c.grad is not None else torch.zeros_like(c)
                            for c in calls], dim=1)  # (B, T) dL/dp_t
        p = joined(calls)
        ref = examples.reference_matrix(chunk, p.shape[1])
        real = batch.tgt_mask & ~torch.isnan(ref)
        dp_abs.append(grad_p[batch.tgt_mask].abs())
        pushed = -grad_p[batch.tgt_mask]
        net += float(pushed.sum())
        total += float(pushed.abs().sum())
        right += int((pushed > 0).sum())
        nonzero += int((pushed != 0).sum())
        # gradient descent moves p_t by -grad: towards ref when sign(-grad) = sign(ref - p)
        away = (ref - p)[real]
        moving = -grad_p[real]
        decided = (away.abs() > 0.5) & (moving != 0)
        toward += int(((away * moving) > 0)[decided].sum())
        counted += int(decided.sum())
    model.zero_grad()
    model.eval()
    used = min(batches, math.ceil(len(examples.encoded) / run.config.data.batch_size))
    return {
        "groups": {name: (g / used, w / used) for name, (g, w) in sums.items()},
        "dp_mean": float(torch.cat(dp_abs).mean()),
        "toward": toward / max(counted, 1), "counted": counted,
        "right": right / max(nonzero, 1), "net": net / max(total, 1e-30),
    }


# --- initialisation -------------------------------------------------------------------------------

def fresh_model(run: TranslationRun) -> Seq2Seq:
    """The run's architecture with the weights training starts from (seeded by train.seed)."""
    seed_everything(run.config.train.seed)
    return build_model(run.config.model, len(run.vocabs.src), len(run.vocabs.tgt),
                       max_src_len=run.config.data.max_len + 1)


def gate_stats(result: dict[str, np.ndarray | float]) -> str:
    p, length = np.asarray(result["p"]), np.asarray(result["length"])
    gate = p / np.maximum(length - 1, 1)
    saturated = np.mean((gate < 0.05) | (gate > 0.95))
    return (f"gate sigmoid(.) mean {gate.mean():.3f}, std {gate.std():.3f}, "
            f"range [{gate.min():.3f}, {gate.max():.3f}], |gate - 0.5| < 0.05: "
            f"{np.mean(np.abs(gate - 0.5) < 0.05):.1%}, saturated (<0.05 or >0.95): "
            f"{saturated:.1%}")


# --- figure ---------------------------------------------------------------------------------------

def plot(run: TranslationRun, examples: Examples, local: LocalAttention, count: int,
         path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    picked = pick_examples(examples, count)
    fig, axes = plt.subplots(1, len(picked), figsize=(3.3 * len(picked), 3.6), squeeze=False)
    for ax, index in zip(axes[0], picked, strict=True):
        sub = Examples(run, [examples.pairs[index]])
        sub.reference = [examples.reference[index]]
        _, batch = next(sub.batches(1))
        with torch.no_grad(), watched(local) as calls:
            out = run.model.all_positions(batch.src, batch.src_mask, batch.tgt_in)
        p = joined(calls)[0].numpy()
        weights = as_dense(out.attention, batch.src.shape[1])[0].numpy()  # (T, S)
        steps = np.arange(len(p))
        ax.imshow(weights.T, origin="lower", aspect="auto", cmap="Greys", vmin=0, vmax=1)
        ax.fill_between(steps, np.round(p) - local.window - 0.5, np.round(p) + local.window + 0.5,
                        color="tab:blue", alpha=0.12, label="window")
        ax.plot(steps, p, "o-", color="tab:blue", ms=3, lw=1.2, label="predicted $p_t$")
        ref = examples.reference[index]
        ax.plot(steps[: len(ref)], ref[: len(steps)], "x", color="tab:red", ms=6, mew=1.6,
                label="reference")
        source, target = examples.pairs[index]
        ax.set_title(f"{source[:28]}\n-> {target[:28]}", fontsize=8)
        ax.set_xlabel("target step t", fontsize=8)
        ax.set_ylim(-0.5, weights.shape[1] - 0.5)
        ax.tick_params(labelsize=7)
    axes[0][0].set_ylabel("source position s", fontsize=8)
    axes[0][0].legend(fontsize=7, loc="upper left")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def pick_examples(examples: Examples, count: int) -> list[int]:
    """Sentences of different source lengths (and so, on dates, different languages' orders)."""
    order = sorted(range(len(examples.pairs)), key=lambda i: len(examples.encoded[i][0]))
    if count <= 1:
        return order[len(order) // 2 : len(order) // 2 + 1]
    return [order[int(round(q * (len(order) - 1)))]
            for q in np.linspace(0.15, 0.95, count)]


# --- the diagonal-prior variant ----------------------------------------------------------------

PLAIN_CENTRES = LocalAttention.centres


def diagonal_prior_centres(self: LocalAttention, query: Tensor, lengths: Tensor,
                           offset: int | Tensor) -> Tensor:
    """p_t = S sigmoid(v_p^T tanh(W_p h_t) + logit((t + 1/2) / (S + 1))): at init (v_p^T ... near
    0) p_t follows the diagonal t; local-m stays local-m."""
    if not self.predictive:
        return PLAIN_CENTRES(self, query, lengths, offset)
    z = self.position_v(torch.tanh(self.position_proj(query))).squeeze(-1)  # (B, Tq)
    steps = torch.arange(query.shape[1], device=query.device, dtype=query.dtype)
    first = torch.as_tensor(offset, device=query.device, dtype=query.dtype).reshape(-1, 1)
    span = (lengths - 1).clamp(min=0).to(query.dtype)  # S, (B, 1 or Tq)
    prior = ((first + steps + 0.5) / (span + 1)).clamp(0.02, 0.98)
    return span * torch.sigmoid(z + torch.logit(prior))


def use_diagonal_prior() -> None:
    LocalAttention.centres = diagonal_prior_centres  # type: ignore[method-assign,unused-ignore]


# --- main -----------------------------------------------------------------------------------------

def trajectory(runs: list[TranslationRun], examples: Examples) -> None:
    """One line per run (checkpoints of one training, same vocabularies): where p_t sits."""
    print(f"{'step':>6} {'gate mean':>9} {'gate std':>8} {'saturated':>9} {'p_t at EOS':>10} "
          f"{'|p_t-ref|':>9} {'r':>6} {'NLL':>7}")
    for run in runs:
        local = local_attention(run.model)
        result = forced(run.model, local, examples)
        p, length = np.asarray(result["p"]), np.asarray(result["length"])
        gate = p / np.maximum(length - 1, 1)
        mad, r, _ = position_stats(p, np.asarray(result["ref"]), local.window)
        print(f"{run.meta.get('step', '?'):>6} {gate.mean():9.3f} {gate.std():8.3f} "
              f"{np.mean((gate < 0.05) | (gate > 0.95)):9.1%} {np.mean(p >= length - 2):10.1%} "
              f"{mad:9.2f} {r:6.3f} {result['nll']:7.3f}")


def parts(text: str) -> str:
    """--parts: some of the letters a, b, c and d."""
    if not text or not set(text) <= set("abcd"):
        raise argparse.ArgumentTypeError(f"must be some of the letters abcd, got {text!r}")
    return text


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", nargs="+",
                        help="a trained local-p run directory; several (checkpoints of one "
                             "training): one line each, where p_t sits (the trajectory)")
    parser.add_argument("--global", dest="global_run", default=None,
                        help="a global-attention run on the same data: its forced argmax is the "
                             "reference when there is no gold, and its loss is printed in (d)")
    parser.add_argument("--data", default=None, help="data directory (default: the run's data.dir)")
    parser.add_argument("--split", default="val", help="the split probed (default: val)")
    parser.add_argument("--sentences", type=whole_number(1), default=500,
                        help="pairs probed (default 500)")
    parser.add_argument("--batches", type=whole_number(1), default=5,
                        help="training batches for the gradient check (default 5)")
    parser.add_argument("--reference", choices=("auto", "gold", "global", "diagonal"),
                        default="auto", help="reference position (auto: gold, else global, else "
                                             "diagonal)")
    parser.add_argument("--parts", type=parts, default="abcd",
                        help="which of (a)-(d) to run (default abcd)")
    parser.add_argument("--diagonal-prior", action="store_true",
                        help="the run was trained with train-diagonal-prior: probe that variant")
    parser.add_argument("--png", default=None, help="write the centres figure here")
    parser.add_argument("--plot", type=whole_number(1), default=4,
                        help="sentences in the figure (default 4)")
    parser.add_argument("--title", default="", help="the figure's title starts with this")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = arguments()
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "train-diagonal-prior":
        from attnlab.cli import main as attnlab

        torch.set_num_threads(1)
        use_diagonal_prior()
        raise SystemExit(attnlab(["train", *argv[1:]]))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.diagonal_prior:
        use_diagonal_prior()

    runs = [TranslationRun.load(directory) for directory in args.run]
    if args.data is not None:
        runs = [replace(r, config=replace(r.config, data=replace(r.config.data, dir=args.data)))
                for r in runs]
    run = runs[0]
    local = local_attention(run.model)
    data = run.config.data
    pairs = read_split(data, args.split)[: args.sentences]
    global_run = TranslationRun.load(args.global_run) if args.global_run else None

    def examples_for(split_pairs: list[tuple[str, str]], split: str) -> Examples:
        ex = Examples(run, split_pairs)
        gold = split_paths(data, split)[0].with_suffix(".align")
        choice = args.reference
        if choice == "auto":
            choice = "gold" if gold.is_file() else "global" if global_run else "diagonal"
        if choice == "gold":
            add_gold(ex, gold)
        elif choice == "global":
            if global_run is None:
                raise SystemExit("--reference global needs --global RUN")
            add_global_argmax(ex, global_run)
        else:
            add_diagonal(ex)
        return ex

    examples = examples_for(pairs, args.split)
    print(f"{len(pairs)} {args.split} pairs; reference: {examples.reference_name}")
    if len(runs) > 1:
        trajectory(sorted(runs, key=lambda r: int(r.meta.get("step", 0))), examples)
        return
    print(f"run {run.path} ({run.checkpoint}, step {run.meta.get('step', '?')}): "
          f"{local.who}, D = {local.window}")
    trained = forced(run.model, local, examples)

    if "a" in args.parts:
        print("\n(a) predicted centres p_t against the reference (forced decoding, eval mode)")
        rows = [("trained p_t", trained["p"]),
                ("p_t = S/2 (untrained gate)", (np.asarray(trained["length"]) - 1) / 2),
                ("in-window attention argmax", trained["argmax"])]
        for name, values in rows:
            mad, r, inside = position_stats(np.asarray(values), np.asarray(trained["ref"]),
                                            local.window)
            print(f"  {name:<28} mean |. - ref| {mad:6.2f}   Pearson r {r:6.3f}   "
                  f"ref inside the window {inside:6.1%}")
        print(f"  attention mass sum_s a_t(s) (1 before the Gaussian): mean "
              f"{np.mean(trained['mass']):.3f}")
        near_end = np.mean(np.asarray(trained["p"]) >= np.asarray(trained["length"]) - 2)
        at_end = np.mean(np.asarray(trained["argmax"]) >= np.asarray(trained["length"]) - 2)
        print(f"  attention on the source EOS: mean {np.mean(trained['eos']):.3f}; p_t within 1 "
              f"of the EOS position S: {near_end:.1%} of steps; attention argmax on the last "
              f"token or EOS: {at_end:.1%}")
        print(f"  mean source length S+1 (EOS included) {np.mean(trained['length']):.1f}, "
              f"window 2D+1 = {2 * local.window + 1}")

    if "b" in args.parts:
        print("\n(b) gradients over training batches (train mode, the run's loss)")
        train_pairs = read_split(data, data.train)[: args.batches * data.batch_size]
        train_examples = examples_for(train_pairs, data.train)
        for label, model in (("trained", run.model), ("init", fresh_model(run))):
            probe = gradient_probe(run, model, train_examples, args.batches)
            print(f"  {label}: mean |dL/dp_t| {probe['dp_mean']:.2e}; -dL/dp_t points towards "
                  f"ref in {probe['toward']:.1%} of {probe['counted']} steps (|ref - p_t| > 0.5); "
                  f"towards the end of the source (-dL/dp_t > 0) in {probe['right']:.1%}; "
                  f"net push sum(-dL/dp_t) / sum|dL/dp_t| {probe['net']:+.3f}")
            for name, (g, w) in probe["groups"].items():  # type: ignore[attr-defined]
                print(f"    {name:<22} |grad| {g:9.2e}   |w| {w:8.2f}   |grad|/|w| {g / w:9.2e}")

    if "c" in args.parts:
        print("\n(c) sigma and the initialisation")
        gaussian = local._gaussian(torch.tensor([float(local.window)]), torch.zeros(1, 1))
        print(f"  Gaussian at s - p_t = D: {float(gaussian):.4f} (sigma = D/2 gives exp(-2) = "
              f"{math.exp(-2):.4f}; sigma = D would give {math.exp(-0.5):.4f})")
        init_model = fresh_model(run)
        init_local = local_attention(init_model)
        print(f"  init W_p entries std {init_local.position_proj.weight.std():.4f}, v_p std "
              f"{init_local.position_v.weight.std():.4f} (hidden "
              f"{init_local.position_v.in_features})")
        at_init = forced(init_model, init_local, examples)
        print(f"  init:    {gate_stats(at_init)}")
        mad, r, inside = position_stats(np.asarray(at_init["p"]), np.asarray(at_init["ref"]),
                                        local.window)
        print(f"           p_t vs ref: mean |p_t - ref| {mad:.2f}, r {r:.3f}, inside {inside:.1%}")
        print(f"  trained: {gate_stats(trained)}")

    if "d" in args.parts:
        print("\n(d) teacher-forced loss with other centres (eval mode)")
        for centre in ("model", "oracle", "middle", "diagonal"):
            result = trained if centre == "model" else forced(run.model, local, examples, centre)
            print(f"  p_t = {centre:<9} NLL/token {result['nll']:.4f}   token accuracy "
                  f"{result['accuracy']:.2%}")
        if global_run is not None:
            result = forced(global_run.model, None, examples)
            at_end = np.mean(np.asarray(result["argmax"]) >= np.asarray(result["length"]) - 2)
            print(f"  global model    NLL/token {result['nll']:.4f}   token accuracy "
                  f"{result['accuracy']:.2%}   (its attention argmax on the last token or EOS: "
                  f"{at_end:.1%})")

    if args.png:
        plot(run, examples, local, args.plot, Path(args.png),
             f"{args.title}local-p (D={local.window}) centres, step {run.meta.get('step', '?')}: "
             f"blue p_t and window, red x {examples.reference_name.split(' (')[0]}")
        print(f"\nfigure: {args.png} ({Path(args.png).stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
