"""train.keep_checkpoints keeps the newest N step checkpoints (atomic, pruned, replaced with the
run); their average is the element-wise mean, tied weights included, written as a loadable run."""

import json
import re
import shutil

import pytest
import torch
from toy_task import ToyModel, ToyTask

from attnlab.data.vocab import build_vocab, load_vocab
from attnlab.errors import CheckpointError, WriteError
from attnlab.train import RunDir, TrainConfig, train
from attnlab.train.averaging import average, average_weights, kept_steps, step_checkpoints


def trained(tmp_path, keep=3, **changes):
    config = TrainConfig(**{**dict(max_steps=20, max_epochs=None, validate_every=None,
                                   checkpoint_every=4, log_every=4, tensorboard=False, lr=5e-2,
                                   device="cpu", keep_checkpoints=keep), **changes})
    run = RunDir(tmp_path / "run")
    task = ToyTask()
    train(task, config, run, progress=False)
    run.write_config({"note": "a toy run"})
    return run, task


def test_the_newest_checkpoints_are_kept_and_the_older_pruned(tmp_path):
    run, _ = trained(tmp_path)
    assert [step for step, _ in kept_steps(run)] == [12, 16, 20]
    assert sorted(p.name for p in (run.path / "checkpoints").iterdir()) == [
        "step-00000012", "step-00000016", "step-00000020"]
    newest = step_checkpoints(run).read_weights("step-00000020")
    last = run.read_weights("last")
    assert newest.tensors.keys() == last.tensors.keys()
    for key, value in last.tensors.items():
        assert torch.equal(newest.tensors[key], value)
    assert not (run.path / "checkpoints" / "step-00000020" / "training_state.pt").exists()


def test_without_keep_checkpoints_there_are_none(tmp_path):
    run, _ = trained(tmp_path, keep=None)
    assert not (run.path / "checkpoints").exists() and kept_steps(run) == []
    with pytest.raises(CheckpointError, match="keeps no step checkpoints .*keep_checkpoints"):
        average(run.path, tmp_path / "average")


def test_averaged_weights_are_the_element_wise_mean(tmp_path):
    run, task = trained(tmp_path)
    steps = [step_checkpoints(run).read_weights(folder.name) for _, folder in kept_steps(run)]
    done = average(run.path, tmp_path / "average", last=2)
    assert done.steps == [16, 20]
    result = RunDir(done.output).read_weights("last")
    assert result.tied == steps[-1].tied and result.tied  # the tied output layer, once
    for key, value in result.tensors.items():
        expected = (steps[1].tensors[key].double() + steps[2].tensors[key].double()) / 2
        torch.testing.assert_close(value, expected.to(value.dtype), rtol=0, atol=1e-7)
        assert not torch.equal(value, steps[2].tensors[key])
    # it loads into the model, tied weights refilled, with the run's config beside it
    model = ToyModel(task.vocab_size, task.dim, 0.0)
    checkpoint = RunDir(done.output).load_checkpoint("last", model, task.signature())
    assert checkpoint.meta["averaged"]["steps"] == [16, 20] and checkpoint.meta["step"] == 20
    assert model.out.weight is model.embedding.weight
    assert (done.output / "config.json").read_text() == run.file("config.json").read_text()
    everything = average_weights(steps)
    key = "hidden.weight"
    torch.testing.assert_close(everything.tensors[key],
                               sum(s.tensors[key] for s in steps) / 3, rtol=0, atol=1e-7)


def test_average_refuses_before_writing(tmp_path):
    run, _ = trained(tmp_path)
    with pytest.raises(CheckpointError, match="--last 5 asks for more checkpoints than the 3"):
        average(run.path, tmp_path / "average", last=5)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    with pytest.raises(WriteError, match="already exists"):
        average(run.path, tmp_path / "taken")
    assert not (tmp_path / "average").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "taken"]


# --- several runs: everything the mean assumes equal is compared, and named when it differs ---
def twin(run: RunDir, name: str, config: dict | None = None, signature: dict | None = None
         ) -> RunDir:
    """A copy of `run` (the same initial weights and steps), its config.json and its step
    checkpoints' signatures changed by `config` and `signature`."""
    other = RunDir(run.path.with_name(name))
    shutil.copytree(run.path, other.path)
    other.write_config({**run.read_config(), **(config or {})})
    for _, folder in kept_steps(other):
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        meta["signature"] = {**meta["signature"], **(signature or {})}
        (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return other


@pytest.fixture
def toy_run(tmp_path):
    run, _ = trained(tmp_path)
    run.write_config({"task": "translation", "data": {"src_lang": "de", "tgt_lang": "en"},
                      "train": {"seed": 1}})
    return run


def test_a_copy_of_a_run_averages_with_it(toy_run, tmp_path):
    done = average([toy_run.path, twin(toy_run, "same").path], tmp_path / "both")
    assert done.steps == [12, 16, 20, 12, 16, 20]


@pytest.mark.parametrize("changes, says", [
    ({"config": {"task": "lm"}}, "differ in task ('translation' and 'lm')"),
    ({"config": {"data": {"src_lang": "en", "tgt_lang": "de"}}},
     "differ in data.src_lang ('de' and 'en'), so the mean of their weights is neither model; "
     "average runs that agree on data.src_lang"),
    ({"signature": {"mechanism": "local-m"}},
     "are of different models (mechanism is None in one and 'local-m' in the other), so their "
     "weights cannot be averaged"),
    ({"signature": {"dim": 6}}, "are of different models (dim is 8 in one and 6 in the other)"),
    ({"signature": {"task": "lm"}}, "(task is None in one and 'lm' in the other)"),
])
def test_what_the_mean_assumes_equal_is_named_with_both_runs(toy_run, tmp_path, changes, says):
    other = twin(toy_run, "other", **changes)
    with pytest.raises(CheckpointError) as error:
        average([toy_run.path, other.path], tmp_path / "mixed")
    assert str(error.value).startswith(f"{toy_run.path} and {other.path} ")
    assert says in str(error.value)
    assert not (tmp_path / "mixed").exists()


TEXTS = [" ".join(["Haus Hund Katze Baum", "Auto Stadt Fluss"][k % 2] for _ in range(k % 5 + 1))
         for k in range(200)]


def with_vocab(run: RunDir, name: str, **options) -> RunDir:
    other = twin(run, name)
    build_vocab("bpe", TEXTS, size=40, directory=other.path, name="vocab", **options)
    return other


def test_sentencepiece_vocabularies_that_split_text_differently_are_refused(toy_run, tmp_path):
    files = ("vocab.json", "vocab.model", "vocab.vocab")
    # two trainings of one vocabulary, in other scratch folders with other thread counts: equal
    one, two = with_vocab(toy_run, "one"), with_vocab(toy_run, "two", num_threads=1)
    average([one.path, two.path], tmp_path / "same", files=files)
    # the same pieces, another normalisation: text is split otherwise
    other = with_vocab(toy_run, "other", normalization_rule_name="identity")
    mine, theirs = (load_vocab(run.path, "vocab") for run in (one, other))
    assert [mine.id_to_piece(i) for i in range(len(mine))] == [
        theirs.id_to_piece(i) for i in range(len(theirs))]
    with pytest.raises(CheckpointError, match=rf"^{re.escape(str(one.path))} and "
                                              rf"{re.escape(str(other.path))} have different "
                                              r"vocab\.json: the same pieces but other "
                                              r"sentencepiece scores, normalisation or options"):
        average([one.path, other.path], tmp_path / "mixed", files=files)
