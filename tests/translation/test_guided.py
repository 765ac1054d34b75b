"""Guided alignment: the loss is its formula on a hand-made example and zero (mse) or minimal
(ce) when the attention equals the links; word links become piece links; the links file is
checked against the training data; every soft mechanism trains with it, hard attention is one
sentence; `attnlab align` writes the links once (a second run on the same files is cached)."""

import json
import math

import pytest
import torch

from attnlab.attention import as_dense
from attnlab.cli import main
from attnlab.config import load_config
from attnlab.data import SPECIAL_PIECES, TokenVocab
from attnlab.errors import ConfigError, DataError
from attnlab.train import run_experiment
from attnlab.translation import RunConfig, TranslationTask
from attnlab.translation.alignment import corpus_links as links_module
from attnlab.translation.corpus import Vocabularies
from attnlab.translation.guided import guided_alignment_loss, piece_links

PAIRS = [("Zwei Männer spielen Fußball .", "Two men play football ."),
         ("Ein Mann spielt Gitarre .", "A man plays guitar ."),
         ("Kinder spielen im Park .", "Children play in the park ."),
         ("Die Frau läuft .", "The woman walks .")]
DIAGONAL = ["0-0 1-1 2-2 3-3 4-4", "0-0 1-1 2-2 3-3 4-4", "0-0 1-1 2-2 2-3 3-4 4-5",
            "0-0 1-1 2-2 3-3"]


def test_the_loss_is_its_formula_on_a_hand_made_example():
    attention = torch.tensor([[[0.6, 0.3, 0.1],
                               [0.2, 0.5, 0.3],
                               [0.1, 0.1, 0.8]]])  # (B=1, T=3, S=3)
    guide = torch.tensor([[[1.0, 0.0, 0.0],
                           [0.0, 1.0, 1.0],     # two links: g = (0, .5, .5)
                           [0.0, 0.0, 0.0]]])   # no links: not guided
    ce = -(math.log(0.6) + 0.5 * math.log(0.5) + 0.5 * math.log(0.3)) / 2
    mse = ((0.4 ** 2 + 0.3 ** 2 + 0.1 ** 2) + (0.2 ** 2 + 0.0 ** 2 + 0.2 ** 2)) / 2
    assert float(guided_alignment_loss(attention, guide, "ce")) == pytest.approx(ce)
    assert float(guided_alignment_loss(attention, guide, "mse")) == pytest.approx(mse)
    assert float(guided_alignment_loss(attention, torch.zeros_like(guide), "ce")) == 0.0
    with pytest.raises(ValueError, match="unknown guided alignment cost"):
        guided_alignment_loss(attention, guide, "mult")


def test_the_loss_is_zero_or_minimal_when_the_attention_is_the_links():
    guide = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]]])
    links = guide / guide.sum(-1, keepdim=True)
    assert float(guided_alignment_loss(links, guide, "mse")) == 0.0
    one_link = guide[:, :2]
    assert float(guided_alignment_loss(links[:, :2], one_link, "ce")) == 0.0
    best = float(guided_alignment_loss(links, guide, "ce"))  # the third row's entropy, log 2 / 3
    assert best == pytest.approx(math.log(2) / 3)
    generator = torch.Generator().manual_seed(0)
    for _ in range(20):
        other = torch.softmax(links.log().clamp_min(-30) + 0.3 * torch.randn(
            links.shape, generator=generator, dtype=links.dtype), -1)
        assert float(guided_alignment_loss(other, guide, "ce")) > best
        assert float(guided_alignment_loss(other, guide, "mse")) > 0


def test_word_links_become_piece_links():
    source = TokenVocab([*SPECIAL_PIECES, *"abcdefg "], "char")  # words end with a space
    target = TokenVocab([*SPECIAL_PIECES, "x", "y"], "word")
    vocabs = Vocabularies(source, target)
    # source "ab cd" = pieces a b ␣ c d </s> (words 0 0 0 1 1 2); target x y </s>
    pairs, outside = piece_links(list("ab cd") + ["</s>"], ["x", "y", "</s>"],
                                 frozenset({(1, 0), (0, 1), (5, 1)}), vocabs)
    assert sorted(map(tuple, pairs.tolist())) == [(0, 3), (0, 4), (1, 0), (1, 1), (1, 2)]
    assert outside == 1


def write_corpus(folder, lines=PAIRS):
    for split in ("train", "val"):
        for index, lang in enumerate(("de", "en")):
            (folder / f"{split}.{lang}").write_text("".join(pair[index] + "\n" for pair in lines),
                                                    encoding="utf-8")


def config(folder, links, mechanism="global", score="additive", decoder="bahdanau", **guided):
    attention = {"score": score, "mechanism": mechanism, "hidden_dim": 8}
    if mechanism.startswith("local"):
        attention["window"] = 2
    return load_config({
        "data": {"dir": str(folder), "train": "train", "valid": "val", "test": "val",
                 "src_lang": "de", "tgt_lang": "en", "vocab": "word", "joint_vocab": False,
                 "vocab_size": 100, "max_len": 20, "batch_size": 2},
        "model": {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.0},
                  "decoder": {"kind": decoder, "embedding_dim": 8, "hidden_dim": 16,
                              "dropout": 0.0, "attention": attention}},
        "train": {"lr": 0.05, "max_steps": 4, "max_epochs": None, "validate_every": None,
                  "checkpoint_every": 4, "log_every": 2, "threads": 1, "device": "cpu",
                  "tensorboard": False,
                  "guided_alignment": {"links": str(links), **guided}},
        "loss": {"label_smoothing": 0.0}}, RunConfig)


@pytest.fixture
def corpus(tmp_path):
    write_corpus(tmp_path)
    links = tmp_path / "train.links"
    links.write_text("".join(line + "\n" for line in DIAGONAL), encoding="utf-8")
    return tmp_path, links


@pytest.mark.slow
@pytest.mark.parametrize("mechanism,score,decoder", [
    ("global", "additive", "bahdanau"), ("local-p", "general", "luong"),
    ("local-m", "dot", "luong"), ("global", "location", "bahdanau")])
def test_every_soft_mechanism_trains_with_the_guided_loss(corpus, mechanism, score, decoder):
    folder, links = corpus
    messages = []
    cfg = config(folder, links, mechanism, score, decoder, cost="mse", weight=2.0)
    task = TranslationTask(cfg, None, log=messages.append)
    assert any("guided alignment (mse, weight 2): 20 word links" in m for m in messages)
    batch = task.make_batch([0, 1])
    task.model.train()
    guided = task.loss(task.model, batch).loss
    task.model.eval()  # validation batches are not guided
    plain = task.loss(task.model, batch).loss
    out = task.model(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_mask)
    attention = as_dense(out.attention)  # local attention's windows, densified
    guide = torch.zeros_like(attention)
    for row, index in enumerate([0, 1]):
        for t, s in task.guide.links[index].tolist():
            guide[row, t, s] = 1.0
    expected = plain + 2.0 * guided_alignment_loss(attention, guide, "mse")
    torch.testing.assert_close(guided, expected)
    assert float(guided.detach()) > float(plain.detach())
    run_experiment(TranslationTask, cfg, folder / f"run-{mechanism}", progress=False,
                   log=lambda _: None)


def test_hard_attention_and_no_attention_are_refused(corpus):
    folder, links = corpus
    with pytest.raises(ConfigError, match="soft attention .* only: hard attention samples"):
        TranslationTask(config(folder, links, "hard"), None, log=lambda _: None)
    with pytest.raises(ConfigError, match="kind none has none"):
        TranslationTask(config(folder, links, decoder="none"), None, log=lambda _: None)
    with pytest.raises(ConfigError, match="must name the links file"):
        config(folder, "")


def test_the_links_file_is_checked_against_the_training_data(corpus):
    folder, links = corpus
    links.write_text("0-0\n", encoding="utf-8")
    with pytest.raises(DataError, match="has 1 lines of links but the training data has 4"):
        TranslationTask(config(folder, links), None, log=lambda _: None)
    with pytest.raises(DataError, match="links file not found: .*attnlab align --src"):
        TranslationTask(config(folder, folder / "missing.links"), None, log=lambda _: None)


def fake_eflomal(calls):
    """eflomal_links replaced by the diagonal in both directions, counting its calls."""
    def links(sources, targets):
        calls.append(len(sources))
        diagonal = [frozenset((i, i) for i in range(min(len(s.split()), len(t.split()))))
                    for s, t in zip(sources, targets, strict=True)]
        return diagonal, diagonal
    return links


def test_align_writes_the_links_once_and_training_checks_them(corpus, monkeypatch, capsys):
    folder, _ = corpus
    calls = []
    monkeypatch.setattr(links_module, "eflomal_links", fake_eflomal(calls))
    monkeypatch.setattr(links_module, "_import_eflomal", lambda: None)
    output = folder / "train.de-en.links"
    command = ["align", "--src", str(folder / "train.de"), "--tgt", str(folder / "train.en"),
               "--output", str(output)]
    assert main(command) == 0 and calls == [4]
    assert "links of 4 pairs" in capsys.readouterr().out
    assert output.read_text(encoding="utf-8").splitlines()[3] == "0-0 1-1 2-2 3-3"
    made = json.loads((folder / "train.de-en.links.json").read_text())
    assert made["method"] == "grow-diag-final-and" and made["pairs"] == 4
    assert main(command) == 0 and calls == [4]  # the same files: nothing aligned again
    assert "already made from these files" in capsys.readouterr().out
    TranslationTask(config(folder, output), None, log=lambda _: None)
    write_corpus(folder, PAIRS[::-1])  # other text of the same length
    with pytest.raises(DataError, match="was made from another source text"):
        TranslationTask(config(folder, output), None, log=lambda _: None)
    assert main(command) == 0 and calls == [4, 4]


def limited_eflomal(calls):
    """eflomal_links as the real one behaves: the diagonal, except that a sentence of 0x400
    words or more is written to its core as an empty one, so its pair comes back unlinked."""
    diagonal = fake_eflomal(calls)

    def links(sources, targets):
        forward, reverse = diagonal(sources, targets)
        short = [len(s.split()) < 0x400 and len(t.split()) < 0x400
                 for s, t in zip(sources, targets, strict=True)]
        return ([f if ok else frozenset() for f, ok in zip(forward, short, strict=True)],
                [r if ok else frozenset() for r, ok in zip(reverse, short, strict=True)])
    return links


def test_align_names_the_pairs_too_long_for_eflomal(tmp_path, monkeypatch, capsys):
    long_pair = (" ".join(["Wort"] * 1100), " ".join(["word"] * 1024))
    write_corpus(tmp_path, [PAIRS[0], long_pair, PAIRS[1]])
    calls = []
    monkeypatch.setattr(links_module, "eflomal_links", limited_eflomal(calls))
    monkeypatch.setattr(links_module, "_import_eflomal", lambda: None)
    output = tmp_path / "train.links"
    command = ["align", "--src", str(tmp_path / "train.de"), "--tgt", str(tmp_path / "train.en"),
               "--output", str(output)]
    assert main(command) == 1
    out, err = capsys.readouterr()
    assert "links of 2 of 3 pairs" in out
    assert err.count("\n") == 1 and "1 pair not linked (eflomal aligns at most 1,023 words" in err
    assert "line 2 (source 1,100 words, target 1,024)" in err
    assert output.read_text(encoding="utf-8").splitlines() == [
        "0-0 1-1 2-2 3-3 4-4", "", "0-0 1-1 2-2 3-3 4-4"]
    assert calls == [2]   # the long pair was not given to eflomal
    assert json.loads((tmp_path / "train.links.json").read_text())["unlinked"] == [[2, 1100,
                                                                                   1024]]
    assert main(command) == 1 and calls == [2]   # cached: said again, not aligned again
    out, err = capsys.readouterr()
    assert "links of 2 of 3 pairs" in out and "line 2 (source 1,100" in err

    # One word fewer on each side is aligned (0x400 - 1 words is eflomal's most).
    write_corpus(tmp_path, [PAIRS[0], (" ".join(["Wort"] * 1023), " ".join(["word"] * 1023))])
    assert main(command) == 0
    assert output.read_text(encoding="utf-8").splitlines()[1].count("-") == 1023
    write_corpus(tmp_path, [long_pair])
    assert main(command) == 2
    assert "no pair of" in capsys.readouterr().err


def test_a_links_file_of_unusable_links_is_refused_before_training(corpus, capsys):
    folder, links = corpus
    links.write_text("".join(f"{40 + i}-{40 + i}\n" for i in range(4)), encoding="utf-8")
    run_dir = folder / "run-unusable"
    with pytest.raises(DataError) as refused:
        run_experiment(TranslationTask, config(folder, links), run_dir, progress=False,
                       log=lambda _: None)
    message = str(refused.value)
    assert message.startswith(f"{links}: 4 of its 4 word links for the 4 training pairs fall "
                              f"outside their sentence, and 4 of the 4 pairs with links have "
                              f"none left (more than half unusable)")
    assert "\n" not in message and not run_dir.exists()
    # More than half of the pairs with links left without one, though most links are usable.
    links.write_text("0-0 1-1 2-2 3-3 4-4\n9-9\n9-9\n9-9\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"3 of the 4 pairs with links have none left"):
        TranslationTask(config(folder, links), None, log=lambda _: None)
    links.write_text("\n" * 4, encoding="utf-8")
    with pytest.raises(DataError, match=r"has no word link for any of the 4 training pairs"):
        TranslationTask(config(folder, links), None, log=lambda _: None)


def test_a_smaller_share_of_unusable_links_is_a_warning(corpus, capsys):
    folder, links = corpus
    lines = [*DIAGONAL[:3], DIAGONAL[3] + " 7-7"]   # one link past the fourth pair's words
    links.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    messages = []
    task = TranslationTask(config(folder, links), None, log=messages.append)
    assert task.guide is not None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"attnlab: warning: guided alignment: {links}: 1 of its 21 word links for the 4 "
        f"training pairs fall outside their sentence, and 0 of the 4 pairs with links have "
        f"none left (4.8% of the links)")
    assert any("21 word links" in m and "4 of 4 training pairs guided" in m for m in messages)
