"""`attnlab average`: a translation run's kept step checkpoints (or several runs') averaged into a
run directory that translate and evaluate read; its refusals are one sentence and write
nothing."""

import json
import re

import pytest
import torch

from attnlab.cli import main
from attnlab.train import RunDir
from attnlab.train.averaging import kept_steps, step_checkpoints

from .conftest import DE_EN, train_run


def kept(directory, data_dir, data_changes=(), **train):
    """A word-level German-English run of 8 updates keeping its last 3 step checkpoints."""
    data = {"dir": str(data_dir), "train": "train", "valid": "val", "test": "val",
            "src_lang": "de", "tgt_lang": "en", "vocab": "word", "joint_vocab": False,
            "vocab_size": 200, "max_len": 20, "batch_size": 3, **dict(data_changes)}
    return train_run(directory, data, max_steps=8, validate_every=None, checkpoint_every=2,
                     keep_checkpoints=3, **train)


@pytest.fixture(scope="module")
def kept_run(tmp_path_factory, deen_data):
    return kept(tmp_path_factory.mktemp("runs") / "kept", deen_data)


@pytest.fixture(scope="module")
def twin_run(tmp_path_factory, deen_data):
    """kept_run's config with another batch order: the same initial weights (train.seed)."""
    return kept(tmp_path_factory.mktemp("runs") / "twin", deen_data, {"seed": 7})


@pytest.fixture(scope="module")
def other_words_run(tmp_path_factory):
    """A run whose source vocabulary has kept_run's size and other words: 'Tennis' for
    'Fußball'."""
    directory = tmp_path_factory.mktemp("tennis")
    for split in ("train", "val"):
        for index, lang in enumerate(("de", "en")):
            lines = "".join(pair[index].replace("Fußball", "Tennis") + "\n" for pair in DE_EN)
            (directory / f"{split}.{lang}").write_text(lines, encoding="utf-8")
    return kept(tmp_path_factory.mktemp("runs") / "tennis", directory)


@pytest.fixture(scope="module")
def other_seed_run(tmp_path_factory, deen_data):
    return kept(tmp_path_factory.mktemp("runs") / "seed-2", deen_data, seed=2)


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


def mean_of(checkpoints):
    """The element-wise mean of step checkpoints' tensors, in float64."""
    return {key: sum(c.tensors[key].double() for c in checkpoints) / len(checkpoints)
            for key in checkpoints[0].tensors}


def newest(run, count):
    return [step_checkpoints(RunDir(run)).read_weights(folder.name)
            for _, folder in kept_steps(RunDir(run))[-count:]]


@pytest.mark.slow
def test_several_runs_are_averaged_together(kept_run, twin_run, tmp_path, capsys):
    # before: argparse kept the last --run, so this averaged twin_run alone (exit 0)
    output = tmp_path / "both"
    assert main(["average", "--run", str(kept_run), "--run", str(twin_run), "--last", "2",
                 "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert (f"averaged 4 checkpoints of {kept_run} (steps 6, 8) and {twin_run} (steps 6, 8) "
            f"into {output}") in out
    expected = mean_of(newest(kept_run, 2) + newest(twin_run, 2))
    mean = RunDir(output).read_weights("last")
    for key, value in mean.tensors.items():
        torch.testing.assert_close(value, expected[key].to(value.dtype), rtol=0, atol=1e-7)
    assert not torch.equal(mean.tensors[key], newest(twin_run, 1)[0].tensors[key])
    meta = json.loads((output / "last" / "meta.json").read_text(encoding="utf-8"))
    assert meta["averaged"] == {"runs": [{"run": str(kept_run), "steps": [6, 8]},
                                         {"run": str(twin_run), "steps": [6, 8]}]}
    assert (output / "config.json").read_bytes() == (kept_run / "config.json").read_bytes()
    source = tmp_path / "in.txt"
    source.write_text(DE_EN[0][0] + "\n", encoding="utf-8")
    assert main(["translate", "--run", str(output), "--input", str(source)]) == 0


@pytest.mark.slow
def test_another_vocabulary_of_the_same_size_is_refused(kept_run, other_words_run, tmp_path,
                                                        capsys):
    # before: only the sizes were compared, and they are the same
    same_size = [json.loads((run / "src_vocab.json").read_text(encoding="utf-8"))["pieces"]
                 for run in (kept_run, other_words_run)]
    assert len(same_size[0]) == len(same_size[1]) and same_size[0] != same_size[1]
    output = tmp_path / "mixed"
    assert main(["average", "--run", str(kept_run), "--run", str(other_words_run), "--output",
                 str(output)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not output.exists()
    assert re.search(rf"{re.escape(str(kept_run))} and {re.escape(str(other_words_run))} have "
                     r"different src_vocab\.json: id \d+ is '\w+' in one and '\w+' in the "
                     r"other, so their weights cannot be averaged", err), err


@pytest.mark.slow
def test_runs_that_cannot_be_averaged_are_one_sentence(kept_run, other_seed_run, tmp_path,
                                                       capsys):
    output = tmp_path / "average"
    assert main(["average", "--run", str(kept_run), "--run", str(other_seed_run), "--output",
                 str(output)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and (f"{kept_run} and {other_seed_run} started from different "
                                     f"initial weights (train.seed 1 and 2)") in err
    assert "ensemble them" in err
    assert main(["average", "--run", str(kept_run), "--run", str(kept_run) + "/", "--output",
                 str(output)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is given twice" in err
    assert main(["average", "--run", str(kept_run), "--run", str(tmp_path / "nothing"),
                 "--output", str(output)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not output.exists()
