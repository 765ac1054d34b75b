"""Mixed precision in the loop, on the CPU: bf16 autocast trains (a toy model and a GRU
translation model) with finite losses close to fp32's; fp16 is refused there in one sentence;
the fp16 gradient scaler's state is saved in `last` and a resumed run continues exactly; and
between two log lines a step reads nothing back from the device."""

import json
from collections import Counter

import pytest
import torch
from toy_task import ToyBatch, ToyTask, parameters

import attnlab.train.device as device_module
from attnlab.data import BucketBatchSampler, collate
from attnlab.errors import ConfigError
from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig, build_model
from attnlab.train import LossOutput, RunDir, TrainConfig, Validation, train
from attnlab.train.config import FP16_ON_CPU
from attnlab.train.distributed import unwrap
from attnlab.train.loop import Trainer

SENTENCE = ("train.precision fp16 runs on CUDA only (its gradient scaler guards fp16's narrow "
            "range on GPUs); on the CPU use bf16 or fp32")


def config(**changes) -> TrainConfig:
    base = dict(max_steps=12, max_epochs=None, validate_every=None, checkpoint_every=None,
                log_every=4, tensorboard=False, lr=1e-2, device="cpu")
    return TrainConfig(**{**base, **changes})


def logged_losses(run_dir) -> list[float]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [record["loss"] for record in map(json.loads, lines) if record["kind"] == "train"]


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


class TinyTranslation:
    """Random sentence pairs for a bidirectional-GRU encoder and a Bahdanau decoder, trained as
    TranslationTask does (the model's own loss)."""

    def __init__(self, seed=0, pairs=24):
        generator = torch.Generator().manual_seed(seed)
        lengths = torch.randint(2, 7, (pairs, 2), generator=generator).tolist()
        self.pairs = [(torch.randint(4, 30, (s,), generator=generator).tolist(),
                       torch.randint(4, 30, (t,), generator=generator).tolist())
                      for s, t in lengths]
        torch.manual_seed(seed)
        self.model = build_model(ModelConfig(
            encoder=EncoderConfig(embedding_dim=8, hidden_dim=8, dropout=0.1),
            decoder=DecoderConfig(kind="bahdanau", embedding_dim=8, hidden_dim=16, dropout=0.1,
                                  attention=AttentionConfig(score="additive", hidden_dim=8))),
            30, 30)
        self.sampler = BucketBatchSampler([(len(s) + 1, len(t) + 1) for s, t in self.pairs], 4,
                                          shuffle=True, seed=seed)

    def make_batch(self, indices):
        return collate([self.pairs[i] for i in indices], indices=indices)

    def loss(self, model, batch):
        out = model(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_mask)
        result = unwrap(model).loss(out, batch.tgt_out, batch.tgt_mask)
        return LossOutput(result.loss, result.nll_sum, result.tokens)

    def validate(self, model):
        return Validation({"sentences": float(len(self.pairs))})

    def signature(self):
        return {"model": "TinyTranslation"}


@pytest.mark.parametrize("make_task", [ToyTask, TinyTranslation])
def test_bf16_autocast_trains_on_the_cpu_close_to_fp32(tmp_path, make_task):
    losses = {}
    for precision in ("fp32", "bf16"):
        train(make_task(), config(precision=precision), RunDir(tmp_path / precision),
              progress=False)
        losses[precision] = logged_losses(tmp_path / precision)
    assert len(losses["bf16"]) == 3
    assert all(torch.isfinite(torch.tensor(losses["bf16"])))
    assert losses["bf16"] == pytest.approx(losses["fp32"], rel=0.05)
    assert losses["bf16"] != losses["fp32"]   # it did run in bf16


def test_fp16_on_the_cpu_is_one_sentence(tmp_path, no_gpu):
    assert SENTENCE == FP16_ON_CPU
    with pytest.raises(ConfigError) as error:
        config(precision="fp16")   # device: cpu, said in the config itself
    assert str(error.value) == SENTENCE
    with pytest.raises(ConfigError) as error:   # auto, on a machine without a GPU
        train(ToyTask(), config(precision="fp16", device="auto"), RunDir(tmp_path / "run"),
              progress=False)
    assert str(error.value) == SENTENCE
    assert not (tmp_path / "run").exists()


@pytest.fixture
def fp16_on_the_cpu(monkeypatch, no_gpu):
    """Lift the refusal: torch's CPU autocast and GradScaler do run fp16, so the scaler's
    plumbing can be tested here."""
    monkeypatch.setattr(device_module, "check_precision", lambda name, device: None)


def test_the_fp16_scaler_state_round_trips_through_a_checkpoint(tmp_path, fp16_on_the_cpu):
    fp16 = dict(precision="fp16", device="auto", max_steps=8, log_every=2)
    straight, split = ToyTask(), ToyTask()
    train(straight, config(**fp16), RunDir(tmp_path / "straight"), progress=False)
    train(split, config(**{**fp16, "max_steps": 4}), RunDir(tmp_path / "split"), progress=False)
    saved = torch.load(tmp_path / "split" / "last" / "training_state.pt", weights_only=True)
    # an overflow lowered the scale from its start (65536): a fresh scaler would differ
    assert saved["scaler"]["scale"] < 65536 and saved["scaler"]["_growth_tracker"] > 0
    resumed = ToyTask()
    train(resumed, config(**fp16), RunDir(tmp_path / "split"), resume=True, progress=False)
    for name, value in parameters(straight.model).items():
        torch.testing.assert_close(parameters(resumed.model)[name], value, rtol=0, atol=0)
    ends = [torch.load(tmp_path / run / "last" / "training_state.pt", weights_only=True)
            for run in ("straight", "split")]
    assert ends[0]["scaler"] == ends[1]["scaler"]
    scales = [record.get("loss_scale") for record in map(
        json.loads, (tmp_path / "straight" / "metrics.jsonl").read_text().splitlines())]
    assert scales[:4] == [saved["scaler"]["scale"]] * 2 + scales[2:4]   # logged with the loss


def test_fp32_and_bf16_save_an_empty_scaler_and_resume_exactly(tmp_path):
    straight, split = ToyTask(), ToyTask()
    train(straight, config(precision="bf16"), RunDir(tmp_path / "straight"), progress=False)
    train(split, config(precision="bf16", max_steps=6), RunDir(tmp_path / "split"),
          progress=False)
    assert torch.load(tmp_path / "split" / "last" / "training_state.pt",
                      weights_only=True)["scaler"] == {}
    resumed = ToyTask()
    train(resumed, config(precision="bf16"), RunDir(tmp_path / "split"), resume=True,
          progress=False)
    for name, value in parameters(straight.model).items():
        torch.testing.assert_close(parameters(resumed.model)[name], value, rtol=0, atol=0)


class TensorLossTask(ToyTask):
    """The toy task as a GPU-minded task writes it: the summed NLL stays a tensor, and the
    token count is known on the host from the lengths (no int(mask.sum()))."""

    def make_batch(self, indices):
        rows = [self.sequences[i] for i in indices]
        ids = torch.zeros(len(rows), max(map(len, rows)), dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = torch.tensor(row)
        return ToyBatch(ids[:, :-1], ids[:, 1:], ids[:, 1:] != 0,
                        sum(len(row) - 1 for row in rows))

    def loss(self, model, batch):
        self.loss_calls += 1
        logits = model(batch.inputs)
        nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), batch.targets,
                                                reduction="none")
        nll_sum = (nll * batch.mask).sum()
        return LossOutput(nll_sum / batch.num_target_tokens, nll_sum.detach(),
                          batch.num_target_tokens)


READS = ("item", "tolist", "__float__", "__int__", "__bool__", "__index__", "cpu", "numpy")


def test_a_step_between_log_lines_reads_nothing_from_the_device(tmp_path, monkeypatch):
    reads = Counter()

    def counted(name):
        original = getattr(torch.Tensor, name)

        def read(self, *args, **kwargs):
            reads[name] += 1
            return original(self, *args, **kwargs)
        return read

    for name in READS:
        monkeypatch.setattr(torch.Tensor, name, counted(name))
    per_step, original_step, original_after = {}, Trainer._train_step, Trainer._after_step

    def train_step(self, indices):
        self.reads_before = reads.total()
        original_step(self, indices)

    def after_step(self, signals):
        stop = original_after(self, signals)
        per_step[self.progress.step] = reads.total() - self.reads_before
        return stop

    monkeypatch.setattr(Trainer, "_train_step", train_step)
    monkeypatch.setattr(Trainer, "_after_step", after_step)
    train(TensorLossTask(), config(max_steps=12, log_every=4), RunDir(tmp_path),
          progress=False)
    assert sorted(per_step) == list(range(1, 13))
    assert {step: n for step, n in per_step.items() if step % 4} == dict.fromkeys(
        [1, 2, 3, 5, 6, 7, 9, 10, 11], 0)
    assert all(per_step[step] > 0 for step in (4, 8, 12))   # the log lines read the sums
    assert len(logged_losses(tmp_path)) == 3


def test_a_diverging_loss_is_named_at_its_step_when_read_later(tmp_path):
    """The loss turns NaN at step 2 of a window that is read at step 4: the error still names
    step 2, and nothing was saved after it."""
    task = TensorLossTask()
    original = task.loss

    def loss(model, batch):
        output = original(model, batch)
        if task.loss_calls == 2:
            output.nll_sum = output.nll_sum * float("nan")
        return output

    task.loss = loss
    with pytest.raises(FloatingPointError, match=r"not finite at step 2 \(nothing saved\)"):
        train(task, config(log_every=4, checkpoint_every=None), RunDir(tmp_path),
              progress=False)
    assert not (tmp_path / "last").exists()
