"""The faithfulness tests of a translation run per attention layer
(attnlab.translation.faithfulness), on a stand-in run around a tiny random model: one summary
per layer, the last the default's, a recurrent decoder's one; uniform attention on the layer
asked for."""

from __future__ import annotations

from types import SimpleNamespace

from attnlab.explain.intervene import attention_layers
from attnlab.models import AttentionConfig
from attnlab.translation.faithfulness import (
    faithfulness,
    faithfulness_per_layer,
    uniform_translations,
)
from explain.test_attribution_parity import model_of

TRANSFORMER = ("transformer", "transformer", True, AttentionConfig("scaled_dot"))
RNN = ("rnn", "luong", True, AttentionConfig("general"))
OUTPUTS = {"4 5 6 7": [8, 9, 10], "5 6": [11, 4]}   # the stand-in's greedy translations


def stand_in(case, seen: list | None = None):
    """A run translating OUTPUTS' lines (ids as words), noting which layers are hooked."""
    model = model_of(*case)

    def translate(lines, **_):
        if seen is not None:
            seen.append([found.intervention is not None for found in attention_layers(model)])
        return [SimpleNamespace(tokens=[*OUTPUTS[line], 2], text=line) for line in lines]

    encode = SimpleNamespace(encode=lambda line: [int(word) for word in line.split()])
    return SimpleNamespace(model=model, translate=translate, vocabs=SimpleNamespace(src=encode))


def test_one_summary_per_layer_the_last_the_default():
    run = stand_in(TRANSFORMER)
    # no adversarial search: its layer is tested on the forced reading (explain/test_layers.py)
    asked = {"limit": 2, "adversarial": 0, "methods": ["gradient"], "steps": 4}
    layers = faithfulness_per_layer(run, list(OUTPUTS), **asked)
    assert len(layers) == 2
    assert layers[-1].to_dict() == faithfulness(run, list(OUTPUTS), **asked).to_dict()
    assert layers[0].to_dict() == faithfulness(run, list(OUTPUTS), layer=0, **asked).to_dict()
    assert layers[0].to_dict() != layers[1].to_dict()


def test_a_recurrent_decoder_has_one_layer_the_one_it_had():
    run = stand_in(RNN)
    asked = {"limit": 2, "adversarial": 0, "methods": ["gradient"], "steps": 4}
    (only,) = faithfulness_per_layer(run, list(OUTPUTS), **asked)
    assert only.to_dict() == faithfulness(run, list(OUTPUTS), **asked).to_dict()


def test_uniform_translations_hook_the_layer_asked_for_and_only_while_translating():
    seen: list = []
    run = stand_in(TRANSFORMER, seen)
    uniform_translations(run, list(OUTPUTS), layer=0)
    uniform_translations(run, list(OUTPUTS))
    assert seen == [[True, False], [False, True]]
    assert not any(found.intervention is not None for found in attention_layers(run.model))


def test_the_attributions_of_a_sentence_are_computed_once_for_every_layer(monkeypatch):
    """The output's attributions to the source are the same whichever layer is read: once per
    sentence, plus the randomisation check's own per layer (its model is another)."""
    from attnlab.explain.forced import ForcedTranslation

    calls: list[int] = []
    attribute = ForcedTranslation.attribute

    def counted(self, method, steps):
        calls.append(self.layer)
        return attribute(self, method, steps)

    monkeypatch.setattr(ForcedTranslation, "attribute", counted)
    run = stand_in(TRANSFORMER)
    faithfulness_per_layer(run, list(OUTPUTS), limit=2, adversarial=0, methods=["gradient"],
                           steps=4)
    # per sentence: the trained model's once (read through the last layer), then the
    # randomised model's through each of the 2 layers
    assert calls == [1, 0, 1] * 2
