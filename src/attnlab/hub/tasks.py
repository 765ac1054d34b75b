"""What the hub knows of each task a run can be trained for: how to load it, which files of the
run directory it needs, how it was trained, and how to describe its model in a few words.

    kind = TASKS[run_task("runs/x")]       # the task meta.json records ("translation", ...)
    trained = kind.load("runs/x", "best", device="cpu")
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from attnlab.captioning import CaptionTask, load_trained
from attnlab.lm import LanguageModelTask, load_language_model
from attnlab.translation import TranslationTask, load_run


@dataclass(frozen=True)
class TaskKind:
    """name: as a checkpoint's meta.json records it; load(path, checkpoint, device=...): the
    recipe's loader; files: the task's own files in a run directory (its vocabularies);
    train: the command that trains it; uses: example commands and python: the same from Python
    (MODEL stands for the folder); architecture(model config as plain data) -> [(part, what)]."""

    name: str
    load: Callable[..., Any]
    files: tuple[str, ...]
    train: str
    uses: tuple[str, ...]
    python: str
    architecture: Callable[[dict], list[tuple[str, str]]]


def _layers(count: int) -> str:
    return f"{count} layer{'s' if count != 1 else ''}"


def attention_summary(attention: dict) -> str:
    """"additive, global", "general, local-p (D=10)", "dot, hard (REINFORCE)"."""
    if attention.get("hard"):
        return f"{attention['score']}, hard (REINFORCE)"
    if attention.get("window") is None:
        return f"{attention['score']}, global"
    kind = "local-p" if attention.get("predictive") else "local-m"
    return f"{attention['score']}, {kind} (D={attention['window']})"


def translation_architecture(model: dict) -> list[tuple[str, str]]:
    encoder, decoder = model["encoder"], model["decoder"]
    if encoder["kind"] == "lstmn":
        reader = f"LSTMN with {encoder['score']} intra-attention (Cheng et al. 2016)"
    else:
        reader = f"{'bidirectional ' if encoder['bidirectional'] else ''}{encoder['rnn'].upper()}"
    parts = [("encoder", f"{reader}, {_layers(encoder['layers'])}, embedding "
                         f"{encoder['embedding_dim']}, hidden {encoder['hidden_dim']}")]
    if decoder["kind"] == "none":
        parts.append(("decoder", f"{decoder['rnn'].upper()} without attention (the final "
                                 f"encoder state only), hidden {decoder['hidden_dim']}"))
        return parts
    feeding = ", input feeding" if decoder["kind"] == "luong" and decoder["input_feeding"] else ""
    parts.append(("decoder", f"{decoder['kind']} {decoder['rnn'].upper()}, "
                             f"{_layers(decoder['layers'])}, embedding {decoder['embedding_dim']}"
                             f", hidden {decoder['hidden_dim']}{feeding}"))
    parts.append(("attention", attention_summary(decoder["attention"])))
    return parts


def captioning_architecture(model: dict) -> list[tuple[str, str]]:
    encoder, decoder = model["encoder"], model["decoder"]
    if encoder["kind"] == "resnet":
        image = (f"{encoder['resnet']} up to stage {encoder['resnet_stages']} "
                 f"({'fine-tuned' if encoder['fine_tune'] else 'frozen'})")
    else:
        image = f"CNN, channels {encoder['channels']}"
    attention = decoder["attention"]
    kind = ("hard (REINFORCE)" if attention["hard"] else
            f"soft, doubly stochastic lambda {attention['doubly_stochastic']}")
    return [("image encoder", image),
            ("decoder", f"LSTM (Xu et al. 2015), embedding {decoder['embedding_dim']}, hidden "
                        f"{decoder['hidden_dim']}"),
            ("attention", f"{attention['score']}, {kind}")]


def language_model_architecture(model: dict) -> list[tuple[str, str]]:
    if model["kind"] == "lstmn":
        reader = f"LSTMN with {model['score']} intra-attention (Cheng et al. 2016)"
    else:
        reader = "LSTM (no attention)"
    return [("reader", f"{reader}, {_layers(model['layers'])}, embedding "
                       f"{model['embedding_dim']}, hidden {model['hidden_dim']}")]


TASKS = {
    "translation": TaskKind(
        "translation", load_run, TranslationTask.run_files, "attnlab train",
        ('echo "a sentence" | attnlab translate --run MODEL --beam 5',
         'attnlab plot --run MODEL "a sentence" --output heatmap.png',
         "attnlab evaluate --run MODEL --src SOURCE --ref REFERENCE",
         "attnlab report --run MODEL --src SOURCE --ref REFERENCE"),
        'attnlab.load("MODEL").translate(["a sentence"], beam=5)[0].text',
        translation_architecture),
    "captioning": TaskKind(
        "captioning", load_trained, CaptionTask.run_files, "attnlab caption train",
        ("attnlab caption predict --run MODEL IMAGE",
         "attnlab caption plot --run MODEL IMAGE --output where.png",
         "attnlab caption evaluate --run MODEL"),
        'attnlab.load("MODEL").caption(["image.png"])[0].text',
        captioning_architecture),
    "language_model": TaskKind(
        "language_model", load_language_model, LanguageModelTask.run_files, "attnlab lm train",
        ("attnlab lm evaluate --run MODEL --text FILE",
         'attnlab lm plot --run MODEL "a sentence"'),
        'attnlab.load("MODEL").perplexity(["a sentence"]).perplexity',
        language_model_architecture),
}
