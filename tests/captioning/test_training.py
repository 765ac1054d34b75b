"""Captioning end to end on a tiny shapes set: train, resume, predict, evaluate, plot."""

import json
import shutil
from functools import partial
from pathlib import Path

import pytest
import torch

from attnlab.captioning import (
    CaptioningRun,
    CaptionTask,
    evaluate_split,
    plot_caption,
    write_shapes,
)
from attnlab.cli import main
from attnlab.data import EOS_ID
from attnlab.errors import DataError, WriteError
from attnlab.train import run_experiment
from attnlab.train.checkpoint import RunDir

from .tiny import tiny_batch, tiny_model, tiny_run_config

train_captioning = partial(run_experiment, CaptionTask)  # train a CaptionTask run

QUIET = {"progress": False, "log": lambda _: None}


@pytest.fixture(scope="module")
def shapes_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("shapes")
    write_shapes(directory, size=40, seed=2, image_size=32)
    return directory


@pytest.fixture(scope="module", params=["soft", "hard"])
def trained_run(request, shapes_dir, tmp_path_factory):
    """A run directory trained for 4 steps, with soft or hard attention."""
    config = tiny_run_config(shapes_dir)
    if request.param == "hard":
        config.model.decoder.attention.mechanism = "hard"
        config.model.decoder.attention.doubly_stochastic = 0.0
    run = tmp_path_factory.mktemp(f"run-{request.param}")
    result = train_captioning(config, run, **QUIET)
    assert result.steps == 4
    return run


@pytest.mark.slow
def test_a_tiny_model_fits_one_batch():
    model = tiny_model(doubly_stochastic=0.0)  # the penalty has a large floor: NLL only
    images, tgt_in, tgt_out, mask = tiny_batch()
    optimiser = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(40):
        optimiser.zero_grad()
        loss = model.loss(model(images, tgt_in), tgt_out, mask).loss
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.3 * losses[0]


@pytest.mark.slow
def test_training_writes_checkpoints_vocabulary_and_metrics(trained_run):
    run = RunDir(trained_run)
    assert run.has_checkpoint("last") and run.has_checkpoint("best")
    assert (trained_run / "vocab.json").is_file()
    lines = (trained_run / "metrics.jsonl").read_text().splitlines()
    validation = [json.loads(line) for line in lines if "bleu4" in line][-1]
    assert {"bleu1", "bleu4", "localisation", "localisation_chance", "loss"} <= set(
        validation.get("metrics", validation))


@pytest.mark.slow
def test_resume_continues_from_last(shapes_dir, tmp_path):
    config = tiny_run_config(shapes_dir, max_steps=2, validate_every=2)
    train_captioning(config, tmp_path / "run", **QUIET)
    config.train.max_steps = 4
    result = train_captioning(config, tmp_path / "run", resume=True, **QUIET)
    assert result.steps == 4


@pytest.mark.slow
def test_training_into_a_trained_run_needs_resume_or_overwrite(trained_run, shapes_dir):
    before = {p: p.read_bytes() for p in trained_run.rglob("*") if p.is_file()}
    with pytest.raises(WriteError, match="already holds a trained run with best/"):
        train_captioning(tiny_run_config(shapes_dir), trained_run, **QUIET)
    assert {p: p.read_bytes() for p in trained_run.rglob("*") if p.is_file()} == before


def captions_file(shapes_dir, tmp_path, change) -> Path:
    """A copy of the shapes caption file after `change(entries)`."""
    data = json.loads((shapes_dir / "dataset_shapes.json").read_text())
    change(data["images"])
    path = tmp_path / "captions.json"
    path.write_text(json.dumps(data))
    return path


def blank_captions(entries, split):
    for entry in entries:
        if entry["split"] == split:
            entry["sentences"] = [{"tokens": [], "raw": ""}]


@pytest.mark.parametrize(("change", "message"), [
    (lambda entries: [e.update(split="test") for e in entries if e["split"] == "val"],
     "no validation images in {json}: none is in the split 'val' (its splits: test, train)"),
    (lambda entries: [e.update(split="test") for e in entries if e["split"] == "train"],
     "no training images in {json}: none is in the split(s) train, restval (its splits: test, "
     "val)"),
    (lambda entries: blank_captions(entries, "train"),
     "no training captions in {json}: every caption of the split(s) train, restval is empty"),
    (lambda entries: [e.update(sentences=[]) for e in entries if e["split"] == "val"],
     "no validation captions in {json}: the images of the split 'val' have no caption"),
])
def test_degenerate_captions_are_named_before_training(shapes_dir, tmp_path, change, message):
    config = tiny_run_config(shapes_dir)
    config.data.json = str(captions_file(shapes_dir, tmp_path, change))
    with pytest.raises(DataError) as error:
        CaptionTask(config, None, log=lambda _: None)
    assert str(error.value) == message.format(json=config.data.json)


@pytest.mark.slow
def test_validation_gives_metrics_and_the_attention_figure(shapes_dir, tmp_path):
    task = CaptionTask(tiny_run_config(shapes_dir), None, log=lambda _: None)
    validation = task.validate(task.model)
    assert {"bleu4", "localisation", "localisation_chance", "loss", "perplexity"} <= set(
        validation.metrics)
    assert 0 <= validation.metrics["localisation_chance"] < 100
    first_caption = validation.text["samples"].splitlines()[0].split(": ", 1)[1]
    assert ("attention" in validation.images) == bool(first_caption)


@pytest.mark.slow
def test_predict_prints_one_caption_per_image(trained_run, shapes_dir, capsys):
    images = [str(shapes_dir / "images" / name) for name in ("000000.png", "000010.png")]
    assert main(["caption", "predict", "--run", str(trained_run), *images]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == images


@pytest.mark.slow
def test_evaluate_reports_bleu_and_localisation(trained_run, tmp_path, capsys):
    output = tmp_path / "scores.json"
    assert main(["evaluate", "--run", str(trained_run), "--beam", "1",
                 "--output", str(output)]) == 0
    printed = capsys.readouterr().out
    assert "BLEU-4" in printed and "localisation" in printed and "chance" in printed
    scores = json.loads(output.read_text())
    assert scores["images"] == 4 and scores["split"] == "test"
    loaded = CaptioningRun.load(trained_run)
    metrics, _, count = evaluate_split(loaded, "val", decode=loaded.decode_settings(beam=1),
                                       limit=2)
    assert count == 2 and set(metrics) >= {"bleu1", "bleu2", "bleu3", "bleu4"}


@pytest.mark.slow
def test_plot_writes_the_figure(trained_run, shapes_dir, tmp_path, capsys):
    # A 4-step model may stop at once: a copy of the run whose EOS never wins has words to draw.
    run = tmp_path / "run"
    shutil.copytree(trained_run, run)
    trained = CaptioningRun.load(run, "best")
    trained.model.decoder.out.bias.data[EOS_ID] = -1e4
    RunDir(run).save_checkpoint("best", trained.model, RunDir(run).read_meta("best")["signature"])
    image = str(shapes_dir / "images" / "000010.png")

    caption, path = plot_caption(trained, image, tmp_path / "attention.png",
                                 trained.decode_settings(beam=1))
    assert path.stat().st_size > 1000 and len(caption.words) == 12  # decode.max_len
    output = tmp_path / "cli.png"
    capsys.readouterr()
    code = main(["plot", "--run", str(run), "--checkpoint", "best", "--beam", "1",
                 image, "--output", str(output)])
    assert code == 0
    assert capsys.readouterr().out.splitlines() == [f"{image}\t{caption.text}",
                                                    f"figure: {output}"]
    assert output.stat().st_size > 1000
