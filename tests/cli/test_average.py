"""`attnlab average`: a translation run's kept step checkpoints averaged into a run directory that
translate and evaluate read; its refusals are one sentence and write nothing."""

import pytest
import torch

from attnlab.cli import main
from attnlab.train import RunDir
from attnlab.train.averaging import kept_steps, step_checkpoints

from .conftest import DE_EN, train_run


@pytest.fixture(scope="module")
def kept_run(tmp_path_factory, deen_data):
    data = {"dir": str(deen_data), "train": "train", "valid": "val", "test": "val",
            "src_lang": "de", "tgt_lang": "en", "vocab": "word", "joint_vocab": False,
            "vocab_size": 200, "max_len": 20, "batch_size": 3}
    return train_run(tmp_path_factory.mktemp("runs") / "kept", data, max_steps=8,
                     validate_every=None, checkpoint_every=2, keep_checkpoints=3)


@pytest.mark.slow
def test_average_writes_a_run_every_command_reads(kept_run, tmp_path, capsys):
    output = tmp_path / "average"
    assert main(["average", "--run", str(kept_run), "--last", "2", "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "averaged 2 checkpoints" in out and "(steps 6, 8)" in out
    steps = [step_checkpoints(RunDir(kept_run)).read_weights(folder.name)
             for _, folder in kept_steps(RunDir(kept_run))[-2:]]
    mean = RunDir(output).read_weights("last")
    for key, value in mean.tensors.items():
        expected = (steps[0].tensors[key].double() + steps[1].tensors[key].double()) / 2
        torch.testing.assert_close(value, expected.to(value.dtype), rtol=0, atol=1e-7)
    assert {"src_vocab.json", "tgt_vocab.json", "config.json", "last"} <= {
        p.name for p in output.iterdir()}
    source = tmp_path / "in.txt"
    source.write_text(DE_EN[0][0] + "\n", encoding="utf-8")
    assert main(["translate", "--run", str(output), "--input", str(source)]) == 0
    assert capsys.readouterr().out.strip()
    assert main(["evaluate", "--run", str(output), "--run", str(kept_run), "--no-rwth"]) == 0
    assert "BLEU" in capsys.readouterr().out


def test_average_refusals_are_one_sentence(kept_run, deen_run, tmp_path, capsys):
    output = tmp_path / "average"
    assert main(["average", "--run", str(deen_run), "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert "keeps no step checkpoints" in err and err.count("\n") == 1
    assert main(["average", "--run", str(kept_run), "--last", "9", "--output",
                 str(output)]) == 2
    assert "--last 9 asks for more checkpoints than the 3" in capsys.readouterr().err
    assert main(["average", "--run", str(tmp_path / "nothing"), "--output", str(output)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not output.exists()
