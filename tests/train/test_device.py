"""Which device training takes (auto, cpu, cuda, cuda:N; cuda:LOCAL_RANK under torchrun) with
torch.cuda's answers stubbed, its one-sentence errors, and batches moved from pinned memory."""

from dataclasses import dataclass

import pytest
import torch
from toy_task import ToyTask

from attnlab.config import load_config
from attnlab.errors import CheckpointError, ConfigError
from attnlab.train import RunDir, TrainConfig, train
from attnlab.train.config import ExperimentConfig
from attnlab.train.device import resolve_device, to_device


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


@pytest.fixture
def two_gpus(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)


@pytest.mark.parametrize("name", ["auto", None, "cpu"])
def test_without_a_gpu_auto_is_the_cpu(no_gpu, name):
    assert resolve_device(name) == torch.device("cpu")


@pytest.mark.parametrize(("name", "expected"), [("auto", "cuda:0"), (None, "cuda:0"),
                                                ("cuda", "cuda:0"), ("cuda:1", "cuda:1"),
                                                ("cpu", "cpu")])
def test_with_gpus_auto_and_cuda_take_the_first(two_gpus, name, expected):
    assert resolve_device(name) == torch.device(expected)


@pytest.mark.parametrize("name", ["auto", "cuda"])
def test_under_torchrun_each_rank_takes_its_local_gpu(two_gpus, monkeypatch, name):
    monkeypatch.setenv("WORLD_SIZE", "4")   # two nodes of two GPUs: this is rank 3
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert resolve_device(name) == torch.device("cuda", 1)
    assert resolve_device("cuda:0") == torch.device("cuda", 0)   # named: as named


@pytest.mark.parametrize("name", ["cuda", "cuda:0"])
def test_cuda_without_a_gpu_is_one_sentence_naming_the_option(no_gpu, name):
    with pytest.raises(ConfigError) as error:
        resolve_device(name)
    assert str(error.value) == (f"train.device is {name} but torch sees no CUDA device on this "
                                f"machine; set it to auto or cpu")
    with pytest.raises(ConfigError, match=r"^--device is cuda but torch sees no CUDA"):
        resolve_device("cuda", option="--device")


def test_a_gpu_the_machine_lacks_is_one_sentence(two_gpus):
    with pytest.raises(ConfigError, match=r"^train.device asks for cuda:2 but this machine has 2 "
                                          r"CUDA devices \(cuda:0 to cuda:1\)$"):
        resolve_device("cuda:2")


@pytest.mark.parametrize("name", ["gpu", "cuda:", "cuda:x", "CPU", "mps", ""])
def test_a_misspelt_device_is_refused_as_the_config_loads(name):
    with pytest.raises(ConfigError, match=rf"^config: train.device must be auto, cpu, cuda or "
                                          rf"cuda:N, got {name!r}$"):
        load_config({"train": {"device": name}}, ExperimentConfig)
    with pytest.raises(ConfigError, match="^train.device must be auto, cpu, cuda or cuda:N"):
        TrainConfig(device=name)


def test_an_older_runs_null_device_is_refused(no_gpu, tmp_path):
    # what attnlab wrote before "auto": refused in one sentence, never read as something else
    run = RunDir(tmp_path / "run")
    run.write_config({"train": {"device": None}})
    with pytest.raises(CheckpointError, match=r"^config.json sets train.device to null, as an "
                                              r"earlier attnlab wrote it: train it again"):
        run.read_config()
    with pytest.raises(ConfigError, match="train.device must be a string, got None"):
        load_config({"train": {"device": None}}, ExperimentConfig)
    assert resolve_device(None) == torch.device("cpu")
    assert TrainConfig().device == "auto" and TrainConfig().precision == "fp32"


def test_training_on_a_missing_gpu_stops_before_anything_is_written(no_gpu, tmp_path):
    config = TrainConfig(max_steps=2, max_epochs=None, tensorboard=False, device="cuda")
    with pytest.raises(ConfigError, match="^train.device is cuda but torch sees no CUDA"):
        train(ToyTask(), config, RunDir(tmp_path / "run"), progress=False)
    assert not (tmp_path / "run").exists()


@dataclass
class _Batch:
    src: torch.Tensor
    mask: torch.Tensor
    indices: list[int]
    num_target_tokens: int

    def to(self, device):
        raise AssertionError("a batch for a GPU is moved field by field, from pinned memory")


def test_a_batch_for_a_gpu_is_pinned_then_copied_without_waiting(monkeypatch):
    moves = []

    def pin_memory(self):
        moves.append(("pin", tuple(self.shape)))
        return self

    def to(self, device, non_blocking=False):
        moves.append(("to", tuple(self.shape), torch.device(device), non_blocking))
        return self

    monkeypatch.setattr(torch.Tensor, "pin_memory", pin_memory)
    monkeypatch.setattr(torch.Tensor, "to", to)
    batch = _Batch(torch.zeros(2, 3, dtype=torch.long), torch.ones(2, 4, dtype=torch.bool),
                   [4, 7], 5)
    moved = to_device(batch, torch.device("cuda", 1))
    assert moves == [("pin", (2, 3)), ("to", (2, 3), torch.device("cuda", 1), True),
                     ("pin", (2, 4)), ("to", (2, 4), torch.device("cuda", 1), True)]
    assert moved.indices == [4, 7] and moved.num_target_tokens == 5   # the rest kept


def test_a_batch_for_the_cpu_moves_with_its_own_to():
    task = ToyTask()
    batch = task.make_batch([0, 1])
    moved = to_device(batch, torch.device("cpu"))
    assert torch.equal(moved.inputs, batch.inputs) and moved.num_target_tokens == \
        batch.num_target_tokens
