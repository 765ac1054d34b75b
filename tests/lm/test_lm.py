"""Language models end to end on a tiny text: train, resume exactly, evaluate, plot; configs."""

import json
import random
import shutil
from functools import partial

import pytest
import torch
from PIL import Image

from attnlab.cli import main
from attnlab.config import load_config
from attnlab.configs import config_path
from attnlab.errors import ConfigError, DataError, UserError
from attnlab.lm import LanguageModelRun, LanguageModelTask, LMRunConfig
from attnlab.lm.corpus import collate_text
from attnlab.models import build_language_model, count_parameters
from attnlab.train import run_experiment
from attnlab.train.checkpoint import RunDir

train_language_model = partial(run_experiment, LanguageModelTask)  # train a LanguageModelTask run

NOUNS = "cat dog man woman child bird".split()
VERBS = "sees chases likes feeds".split()


def sentence(rng):
    return (f"the {rng.choice(['big', 'small', 'old'])} {rng.choice(NOUNS)} "
            f"{rng.choice(VERBS)} the {rng.choice(NOUNS)} .")


@pytest.fixture(scope="module")
def text_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("text")
    rng = random.Random(0)
    for name, count in (("train.txt", 160), ("valid.txt", 12)):
        (directory / name).write_text("\n".join(sentence(rng) for _ in range(count)) + "\n")
    (directory / "test.txt").write_text("the old dog likes the child .\n\nthe cat sees it .\n")
    return directory


def tiny(text_dir, kind="lstmn", **train):
    data = {
        "data": {"dir": str(text_dir), "train": "train.txt", "valid": "valid.txt",
                 "test": "test.txt", "vocab": "word", "vocab_size": None, "batch_size": 16},
        "model": {"kind": kind, "embedding_dim": 8, "hidden_dim": 8, "layers": 2,
                  "dropout": 0.1},
        "train": {"lr": 0.01, "max_steps": 8, "max_epochs": None, "validate_every": 4,
                  "checkpoint_every": 2, "log_every": 2, "threads": 1,
                  "early_stopping": {"metric": "perplexity", "mode": "min"}, **train},
    }
    return load_config(data, LMRunConfig)


def quiet(_):
    pass


@pytest.fixture(scope="module")
def lstmn_run(text_dir, tmp_path_factory):
    run = tmp_path_factory.mktemp("runs") / "lstmn"
    result = train_language_model(tiny(text_dir), run, progress=False, log=quiet)
    return run, result


def test_trains_validates_and_checkpoints(lstmn_run):
    run, result = lstmn_run
    assert result.steps == 8 and result.stopped_by == "max_steps"
    assert {"loss", "perplexity"} <= set(result.last_metrics)
    assert RunDir(run).has_checkpoint("best") and RunDir(run).has_checkpoint("last")
    assert (run / "vocab.json").is_file() and (run / "config.json").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["lstmn", "lstm"])
def test_resume_continues_exactly(text_dir, tmp_path, kind):
    straight = train_language_model(tiny(text_dir, kind), tmp_path / "a", progress=False,
                                    log=quiet)
    train_language_model(tiny(text_dir, kind, max_steps=4), tmp_path / "b", progress=False,
                         log=quiet)
    resumed = train_language_model(tiny(text_dir, kind), tmp_path / "b", resume=True,
                                   progress=False, log=quiet)
    assert straight.steps == resumed.steps == 8
    weights = [(tmp_path / name / "last" / "model.safetensors").read_bytes() for name in "ab"]
    assert weights[0] == weights[1]


@pytest.mark.slow
def test_cli_prints_parameter_count_and_resumes(text_dir, tmp_path, capsys):
    assert main(["train", str(write_yaml(tmp_path, tiny(text_dir))), "--run",
                 str(tmp_path / "run"), "--quiet", "--set", "train.max_steps=1"]) == 0
    out = capsys.readouterr().out
    model = build_language_model(tiny(text_dir).model, 4 + len(vocabulary()), max_len=101)
    assert f"model: lstmn, {count_parameters(model):,} parameters" in out
    assert "stopped after 1 steps" in out
    # Resuming needs no config: the run directory has it.
    assert main(["train", "--run", str(tmp_path / "run"), "--resume", "--quiet",
                 "--set", "train.max_steps=2"]) == 0
    assert "stopped after 2 steps" in capsys.readouterr().out


def test_training_into_a_trained_run_needs_resume_or_overwrite(lstmn_run, text_dir, tmp_path,
                                                               capsys):
    run, _ = lstmn_run
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["train", str(write_yaml(tmp_path, tiny(text_dir))), "--run", str(run),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"attnlab: error: {run} already holds a trained run with best/ (step ")
    assert err.endswith("last/ (step 8): pass --resume to continue it or --overwrite to replace "
                        "it\n")
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def degenerate(text_dir, tmp_path, train=None, valid=None, **data) -> str:
    """The DataError of a task whose training or validation text is replaced."""
    directory = tmp_path / "text"
    shutil.copytree(text_dir, directory)
    for name, text in (("train.txt", train), ("valid.txt", valid)):
        if text is not None:
            (directory / name).write_text(text)
    config = tiny(text_dir)
    config.data.dir = str(directory)
    for key, value in data.items():
        setattr(config.data, key, value)
    with pytest.raises(DataError) as error:
        LanguageModelTask(config, None, log=quiet)
    return str(error.value).replace(str(directory), "DIR")


def test_degenerate_text_is_named_before_training(text_dir, tmp_path):
    assert degenerate(text_dir, tmp_path, train="") == ("no training text in DIR/train.txt: the "
                                                       "file is empty")
    assert degenerate(text_dir, tmp_path / "2", train="\n \n") == (
        "no training text in DIR/train.txt: none of its 2 lines has text")
    assert degenerate(text_dir, tmp_path / "3", max_len=3) == (
        "no training text in DIR/train.txt: kept 0 of 160 sentences (160 longer than 3 pieces); "
        "raise data.max_len")
    assert degenerate(text_dir, tmp_path / "4", valid="") == (
        "no validation text in DIR/valid.txt: the file is empty")
    assert degenerate(text_dir, tmp_path / "5", valid="\n\nthe cat .\n", valid_sentences=2) == (
        "no validation text in DIR/valid.txt: none of its first 2 lines has text")


def vocabulary():
    return {*NOUNS, *VERBS, "the", "big", "small", "old", "."}


def write_yaml(directory, config):
    from attnlab.config import config_to_dict

    path = directory / "lm.yaml"
    path.write_text(json.dumps({"task": "lm", **config_to_dict(config)}))  # JSON is YAML
    return path


def test_evaluate_prints_perplexity(lstmn_run, text_dir, capsys):
    run, _ = lstmn_run
    loaded = LanguageModelRun.load(run)
    result = loaded.evaluate(text=text_dir / "test.txt")
    assert result.sentences == 2 and result.skipped == 1  # the empty line
    assert result.tokens == (7 + 1) + (5 + 1)  # each sentence's </s> counts
    assert 1 < result.perplexity < 4 + len(vocabulary())
    assert loaded.evaluate().perplexity == result.perplexity  # data.test by default
    assert main(["evaluate", "--run", str(run), "--text", str(text_dir / "test.txt")]) == 0
    assert f"perplexity {result.perplexity:.2f}" in capsys.readouterr().out


def test_validation_perplexity_equals_evaluate(lstmn_run, text_dir):
    run, result = lstmn_run
    last = LanguageModelRun.load(run, "last").evaluate(text=text_dir / "valid.txt")
    assert last.perplexity == pytest.approx(result.last_metrics["perplexity"], rel=1e-5)


def test_plot_writes_reading_figure_and_matrix(lstmn_run, tmp_path, capsys):
    run, _ = lstmn_run
    output = tmp_path / "reading.png"
    assert main(["lm", "plot", "--run", str(run), "the dog sees the cat .",
                 "--output", str(output), "--layer", "1"]) == 0
    for path in (output, tmp_path / "reading-matrix.png"):
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width > 100
    assert main(["plot", "--run", str(run), "the cat"]) == 0
    printed = capsys.readouterr().out
    default = run / "plots" / "self-attention.png"
    assert f"reading figure: {default}" in printed
    assert default.is_file() and (run / "plots" / "self-attention-matrix.png").is_file()


def test_plot_of_an_lstm_or_a_bad_layer_is_one_clear_error(text_dir, tmp_path, lstmn_run):
    run = tmp_path / "lstm"
    train_language_model(tiny(text_dir, "lstm", max_steps=1), run, progress=False, log=quiet)
    with pytest.raises(UserError, match="no self-attention"):
        LanguageModelRun.load(run).plot("the cat", tmp_path / "lstm.png")
    with pytest.raises(UserError,
                       match=r"^--layer 3 is out of range: this model has 2 layers, 1 to 2"):
        LanguageModelRun.load(lstmn_run[0]).plot("the cat", tmp_path / "lstmn.png", layer=3)
    with pytest.raises(UserError, match=r"^--layer 0 is out of range"):
        LanguageModelRun.load(lstmn_run[0]).plot("the cat", tmp_path / "lstmn.png", layer=0)


def test_padding_does_not_change_a_sentence_score(lstmn_run):
    trained = LanguageModelRun.load(lstmn_run[0])
    ids = [trained.vocab.encode(s) for s in ("the cat sees the dog .", "the cat")]
    batch = collate_text(ids)
    alone = trained.model.all_positions(collate_text(ids[1:]).inputs,
                                        collate_text(ids[1:]).mask).logits
    together = trained.model.all_positions(batch.inputs, batch.mask).logits
    torch.testing.assert_close(together[1, :3], alone[0])


def test_bad_config_names_the_key(text_dir):
    config = tiny(text_dir)
    config.model.score = "nope"
    with pytest.raises(ConfigError, match="model.score"):
        build_language_model(config.model, 20, max_len=10)


def test_shipped_configs_have_equal_parameter_budgets():
    counts = {}
    for kind in ("lstmn", "lstm"):
        path = config_path(f"lm-multi30k-{kind}")
        config = load_config(path, LMRunConfig)
        assert config.model.kind == kind
        model = build_language_model(config.model, config.data.vocab_size,
                                     max_len=config.data.max_len + 1)
        counts[kind] = count_parameters(model)
        assert f"{counts[kind]:,}" in path.read_text()  # the count stated in the comments
    assert abs(counts["lstmn"] - counts["lstm"]) / counts["lstmn"] < 0.005


def test_lm_plot_command(lstmn_run, tmp_path):
    run, _ = lstmn_run
    output = tmp_path / "seed-figure.png"
    assert main(["lm", "plot", "--run", str(run), "the dog sees the cat .",
                 "--output", str(output)]) == 0
    with Image.open(output) as image:
        assert image.format == "PNG" and image.width > 100
    assert (tmp_path / "seed-figure-matrix.png").is_file()
