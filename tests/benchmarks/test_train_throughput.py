"""benchmarks/train_throughput.py's options, JoeyNMT's transformer config against attnlab's
shipped one (the benchmark claims the identical model), and how a JoeyNMT run's log is read."""

import argparse

import pytest
import yaml

from attnlab.config import load_config
from attnlab.configs import config_path
from attnlab.translation.config import RunConfig
from peers.joeynmt import read_log
from train_throughput import MODELS, arguments, options


def test_the_options_name_the_model_and_need_a_window_after_the_warm_up(capsys):
    assert (options([]).model, options([]).window, options([]).updates) == ("rnn", 20, 200)
    assert options(["--model", "transformer"]).model == "transformer"
    assert options(["--updates", "10", "--window", "5"]).updates == 10
    with pytest.raises(SystemExit):
        options(["--updates", "20"])
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        "error: --updates 20 leaves no window after the first (warm-up) one: give at least 40 "
        "(twice --window 20)")
    with pytest.raises(SystemExit):
        options(["--model", "lstm"])


def test_joeynmt_trains_the_shipped_transformer():
    """Every setting the docstring does not list as a difference is the same in both."""
    ours = load_config(config_path("multi30k-transformer"), RunConfig)
    joey = yaml.safe_load(MODELS["transformer"].joeynmt_config.read_text(encoding="utf-8"))
    model, training = joey["model"], joey["training"]
    assert model["tied_softmax"] is ours.model.decoder.tied_embeddings is True
    assert model["tied_embeddings"] is False  # attnlab's source embeddings are their own
    for side, theirs in ((ours.model.encoder, model["encoder"]),
                         (ours.model.decoder, model["decoder"])):
        assert (theirs["type"], theirs["layer_norm"], side.kind) == ("transformer", "pre",
                                                                       "transformer")
        assert (theirs["num_layers"], theirs["num_heads"], theirs["hidden_size"],
                theirs["ff_size"], theirs["dropout"], theirs["embeddings"]["dropout"],
                theirs["embeddings"]["embedding_dim"]) == (
            side.layers, side.heads, side.hidden_dim, side.ff_dim, side.dropout, side.dropout,
            side.embedding_dim)
        assert theirs["embeddings"]["scale"] is True and side.positions == "sinusoidal"
    assert (training["batch_size"], training["batch_type"]) == (ours.data.batch_size,
                                                                "sentence")
    assert ours.data.batch_unit == "sentences"
    assert (training["learning_rate"], tuple(training["adam_betas"]),
            training["clip_grad_norm"], training["label_smoothing"]) == (
        ours.train.lr, ours.train.betas, ours.train.clip_norm, ours.loss.label_smoothing)
    assert ours.train.schedule.kind == "warmup_decay"
    assert training["scheduling"] == "warmupinversesquareroot"
    assert training["learning_rate_warmup"] == ours.train.schedule.warmup_steps
    assert (joey["data"]["src"]["max_length"], ours.data.vocab, ours.data.vocab_size,
            ours.data.joint_vocab) == (ours.data.max_len, "bpe", 8000, True)


LOG = """\
2026-12-07 19:44:03,713 - INFO - joeynmt.model - Total params: 8050688
2026-12-07 19:44:03,714 - INFO - joeynmt.prediction - Model(
\tencoder=TransformerEncoder(num_layers=3, num_heads=8, alpha=1.0, layer_norm="pre"),
\tdecoder=TransformerDecoder(num_layers=3, num_heads=8, alpha=1.0, layer_norm="pre"),
\tsrc_embed=Embeddings(embedding_dim=256, vocab_size=8000),
2026-12-07 19:55:02,993 - INFO - joeynmt.training - Epoch   1, Step:       20, Batch Loss:     \
6.98, Batch Acc: 0.018301, Tokens per Sec:       59, Lr: 0.000014
2026-12-07 19:56:02,993 - INFO - joeynmt.training - Epoch   1, Step:       40, Batch Loss:     \
6.50, Batch Acc: 0.02, Tokens per Sec:      900, Lr: 0.000028
2026-12-07 19:57:02,993 - INFO - joeynmt.training - Epoch   1, Step:       60, Batch Loss:     \
6.40, Batch Acc: 0.02, Tokens per Sec:     1000, Lr: 0.000042
2026-12-07 19:58:02,993 - INFO - joeynmt.training - Epoch   2, Step:       80, Batch Loss:     \
6.30, Batch Acc: 0.02, Tokens per Sec:     1300, Lr: 0.000056
"""
TIMING = "\tMaximum resident set size (kbytes): 2097152\n"


def test_a_log_gives_the_median_after_the_first_window_the_parameters_and_the_model(tmp_path):
    log = tmp_path / "joey.out"
    log.write_text(LOG, encoding="utf-8")
    run = read_log(log, TIMING, 0)
    assert run is not None
    assert (run.tokens_per_s, run.low, run.high) == (1000, 900, 1300)  # 59 is the warm-up
    assert (run.parameters, run.peak_rss_mib) == (8050688, 2048)
    assert run.model == "TransformerEncoder / TransformerDecoder"


@pytest.mark.parametrize("text, code", [(LOG, 1), (LOG.split("2026-12-07 19:56")[0], 0)])
def test_a_failed_run_or_one_without_a_measured_window_is_one_sentence(tmp_path, capsys, text,
                                                                         code):
    log = tmp_path / "joey.out"
    log.write_text(text, encoding="utf-8")
    assert read_log(log, TIMING, code) is None
    said = capsys.readouterr().out
    assert said.startswith("(JoeyNMT's run failed (exit ") and "JoeyNMT skipped" in said


def test_every_variant_is_a_worker_choice():
    worker = next(action for action in arguments()._actions if action.dest == "worker")
    assert worker.help == argparse.SUPPRESS
    assert set(worker.choices) == {name for model in MODELS.values() for name in model.variants}
