"""--device for translate, evaluate and serve: auto by default, spelt as train.device (auto,
cpu, cuda, cuda:N), a misspelling refused as the arguments are read, the chosen device handed
to the loading (int8 quantization keeps auto on the CPU), and a GPU the machine lacks one
sentence."""

import pytest
import torch

import attnlab.serve
from attnlab.cli import build_parser, main
from attnlab.errors import UserError
from attnlab.serve.runs import load_runs
from attnlab.translation import TranslationRun

COMMANDS = {"translate": ["translate", "--run", "RUN"],
            "evaluate": ["evaluate", "--run", "RUN"],
            "serve": ["serve", "--run", "RUN"]}


class Stop(UserError):
    """Raised by a stub once it has seen what the command passed on."""


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("device", ["auto", "cpu", "cuda", "cuda:1"])
def test_every_command_reads_the_device(command, device):
    args = build_parser().parse_args([*COMMANDS[command], "--device", device])
    assert args.device == device
    assert build_parser().parse_args(COMMANDS[command]).device == "auto"


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("device", ["gpu", "cuda:", "CUDA"])
def test_a_misspelt_device_is_refused_before_anything_runs(command, device, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*COMMANDS[command], "--device", device])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert f"argument --device: must be auto, cpu, cuda or cuda:N, got {device!r}" in error
    assert "Traceback" not in error


@pytest.fixture
def loaded_on(monkeypatch):
    """The device the run would be loaded on, by translate and evaluate."""
    seen = []

    def load(path, checkpoint=None, *, device="cpu"):
        seen.append(device)
        raise Stop("stub: loaded")

    monkeypatch.setattr(TranslationRun, "load", staticmethod(load))
    return seen


@pytest.mark.parametrize("command", ["translate", "evaluate"])
@pytest.mark.parametrize(("flags", "device"), [([], "auto"), (["--device", "cuda:1"], "cuda:1"),
                                               (["--quantize", "int8"], "cpu"),
                                               (["--quantize", "int8", "--device", "cpu"],
                                                "cpu")])
def test_translate_and_evaluate_load_on_the_device(command, flags, device, deen_run, loaded_on,
                                                   capsys):
    assert main([command, "--run", str(deen_run), *flags]) == 2
    assert "stub: loaded" in capsys.readouterr().err
    assert loaded_on == [device]


@pytest.mark.parametrize(("flags", "device"), [([], "auto"), (["--device", "cpu"], "cpu"),
                                               (["--device", "cuda"], "cuda")])
def test_serve_loads_its_runs_on_the_device(flags, device, deen_run, monkeypatch, capsys):
    seen = []

    def create_app(runs, limits, **options):
        seen.append(options["device"])
        raise Stop("stub: app")

    monkeypatch.setattr(attnlab.serve, "create_app", create_app)
    assert main(["serve", "--run", str(deen_run), *flags]) == 2
    assert "stub: app" in capsys.readouterr().err
    assert seen == [device]


def test_a_gpu_the_machine_lacks_is_one_sentence(deen_run, monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["translate", "--run", str(deen_run), "--device", "cuda"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "no CUDA device" in error and "Traceback" not in error


def test_served_runs_load_on_the_device_and_int8_keeps_auto_on_the_cpu(deen_run):
    served = load_runs({"deen": deen_run}, device="cpu")["deen"]
    assert next(served.loaded.model.parameters()).device == torch.device("cpu")
    quantized = load_runs({"deen": deen_run}, quantize="int8", device="auto")["deen"]
    assert quantized.quantized == "int8"
