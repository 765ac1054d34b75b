"""`attnlab.load(path)`: a run directory or an exported model directory, its task read from its
checkpoint, as an object with the task's verbs.

    model = attnlab.load("models/bahdanau")                  # best, else last; on the CPU
    model.translate(["Zwei Männer spielen Fußball ."], beam=5)[0].text
    model.translate(lines, n_best=3)[0].hypotheses              # the 3 best, best first
    attnlab.load("models/shapes").caption(["cat.png"])[0].text
    attnlab.load("models/lstmn").perplexity(lines).perplexity

Each is a thin wrapper over the recipe's loaded run (`.trained`: TrainedRun, TrainedCaptioner,
TrainedLanguageModel), which holds the model, vocabularies and config.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import torch
from PIL import Image

from attnlab.captioning import Caption
from attnlab.captioning.data import load_image, square_pixels
from attnlab.captioning.inference import caption_pixels
from attnlab.errors import CheckpointError, DataError, UserError
from attnlab.lm import PerplexityResult, read_with_language_model
from attnlab.lm.corpus import encode_text
from attnlab.lm.task import text_nll
from attnlab.recipes import recipe_of_run
from attnlab.train import RunDir, choose_checkpoint
from attnlab.train.runs import listed
from attnlab.train.validation import perplexity
from attnlab.translation import TranslationResult
from attnlab.translation.ensemble import TrainedEnsemble, load_ensemble
from attnlab.viz import SentenceReading

if TYPE_CHECKING:
    from attnlab.models import Captioner


@dataclass(repr=False)
class LoadedModel:
    """A loaded run: path, checkpoint ("best" or "last"), meta (its meta.json: step, metrics,
    signature) and trained (the recipe's loaded run); config and model (eval mode) from it."""

    task: ClassVar[str] = ""
    kind: ClassVar[str] = ""  # "a captioning model", in the sentence for another task's verb
    verbs: ClassVar[dict[str, str]] = {}  # verb -> how to call it, ".caption(images)"
    path: Path
    checkpoint: str
    meta: dict
    trained: Any

    @property
    def config(self):
        return self.trained.config

    @property
    def model(self) -> torch.nn.Module:
        return self.trained.model

    def __repr__(self) -> str:
        step = self.meta.get("step", "?")
        return (f"{type(self).__name__}({str(self.path)!r}, checkpoint={self.checkpoint!r}, "
                f"step={step})")

    if not TYPE_CHECKING:  # hidden from mypy, which would otherwise accept any attribute

        def __getattr__(self, name: str):
            """Only for a missing attribute: another task's verb (.caption on a translation
            model) says what this model is and which verbs it has."""
            if self.kind and any(name in other.verbs for other in WRAPPERS.values()):
                ways = " or ".join(self.verbs.values())
                raise AttributeError(f"this is {self.kind}, which has no .{name}(): use {ways}")
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class Translator(LoadedModel):
    task = "translation"
    kind = "a translation model"
    verbs = {"translate": ".translate(lines)", "stream": ".stream(lines)"}

    def translate(self, lines: Sequence[str], *, beam: int | None = None,
                  n_best: int | None = None, alpha: float | None = None,
                  batch_size: int | None = None, beta: float | None = None,
                  length_penalty: str | None = None, replace_unk: bool = False,
                  dictionary: str | os.PathLike | Mapping[str, str] | None = None,
                  member_attention: bool = False) -> list[TranslationResult]:
        """One TranslationResult per line (text, score, tokens, attention), in input order,
        with the run's decode settings unless given. n_best=N: each result carries the next
        N - 1 hypotheses as `alternatives` (`.hypotheses`: all N, best first); the beam widens
        to N when the run's is smaller. beta: the GNMT coverage penalty; length_penalty: gnmt,
        average or none; replace_unk: each <unk> becomes the source word it attends to most (or
        its `dictionary` entry: a file of 'source target' lines, or a mapping). An ensemble's
        attention is its members' mean; member_attention=True adds each member's own as
        `.member_attention` (a single model's: [its attention])."""
        settings: dict[str, Any] = dict(beam=beam, n_best=n_best, alpha=alpha,
                                        batch_size=batch_size, beta=beta,
                                        length_penalty=length_penalty,
                                        replace_unk=replace_unk, dictionary=dictionary)
        if isinstance(self.trained, TrainedEnsemble):
            return self.trained.translate(lines, member_attention=member_attention, **settings)
        found = self.trained.translate(lines, **settings)
        return [_as_own(result) for result in found] if member_attention else found

    def stream(self, lines: Iterable[str], **settings: Any) -> Iterator[TranslationResult]:
        """As translate, lazily (TrainedRun.stream: pool_size, tick)."""
        if isinstance(self.trained, TrainedEnsemble) or not settings.pop("member_attention",
                                                                          False):
            return self.trained.stream(lines, **settings)
        return (_as_own(result) for result in self.trained.stream(lines, **settings))


def _as_own(result: TranslationResult) -> TranslationResult:
    """A single model's result as an ensemble of one's: its attention is its members'."""
    for hypothesis in result.hypotheses:
        hypothesis.member_attention = [hypothesis.attention]
    return result


@dataclass(repr=False)
class EnsembleTranslator(Translator):
    """Several translation runs as one Translator (`paths`, in order; `path` the first's):
    each step decodes with the mean of their log-probabilities, the attention their mean."""

    paths: list[Path] = field(default_factory=list)

    def __repr__(self) -> str:
        paths = ", ".join(repr(str(path)) for path in self.paths)
        return f"EnsembleTranslator([{paths}], checkpoint={self.checkpoint!r})"


class ImageCaptioner(LoadedModel):
    task = "captioning"
    kind = "a captioning model"
    verbs = {"caption": ".caption(images)"}

    def caption(self, images: Sequence[str | os.PathLike | Image.Image], *,
                beam: int | None = None) -> list[Caption]:
        """One Caption per image (a file or a PIL image): words, text, attention
        (words, h, w) over the annotation grid, log_prob; beam search, the run's beam unless
        given. Images are scaled and centre-cropped as in training."""
        images = listed(images, "caption", "images", (str, bytes, os.PathLike, Image.Image))
        size = self.config.data.image_size
        pixels = [square_pixels(image.convert("RGB"), size) if isinstance(image, Image.Image)
                  else load_image(image, size)[0] for image in images]
        if not pixels:
            return []
        return caption_pixels(cast("Captioner", self.model), torch.from_numpy(np.stack(pixels)),
                              self.trained.vocab, self.config.data, self.config.decode,
                              beam=beam)


class LanguageModelReader(LoadedModel):
    task = "lm"
    kind = "a language model"
    verbs = {"perplexity": ".perplexity(lines)", "read": ".read(sentence)"}

    def read(self, sentence: str) -> SentenceReading:
        """What an LSTMN attends to reading <s> w_1 .. w_n: tokens and weights
        (layers, T, T), row t the weights over the tokens before t."""
        return read_with_language_model(self.model, self.trained.vocab, sentence)

    def perplexity(self, lines: Iterable[str], *, batch_size: int = 64) -> PerplexityResult:
        """Per-token perplexity of the sentences (EOS counted), as `attnlab lm evaluate`
        computes it; empty lines and those over the run's data.max_len pieces are skipped."""
        lines = listed(lines, "perplexity", "lines")
        max_len = self.config.data.max_len
        encoded = encode_text(lines, self.trained.vocab, max_len)
        if not encoded.sentences:
            raise DataError(f"no sentence to score ({encoded.summary()}); perplexity needs at "
                            f"least one non-empty line of at most {max_len} pieces")
        nll, tokens = text_nll(self.model, encoded.sentences, batch_size)
        return PerplexityResult(perplexity(nll / max(tokens, 1)), nll, tokens,
                                len(encoded.sentences), encoded.empty + encoded.too_long,
                                self.checkpoint)


WRAPPERS: dict[str, type[LoadedModel]] = {
    wrapper.task: wrapper for wrapper in (Translator, ImageCaptioner, LanguageModelReader)}


def load(path: str | os.PathLike | Sequence[str | os.PathLike], *,
         checkpoint: str | None = None, device: str | torch.device = "cpu") -> LoadedModel:
    """A run directory or a model directory `attnlab export` wrote, loaded for its task:
    a Translator, ImageCaptioner or LanguageModelReader (`checkpoint`: "best", "last", or None
    for best-else-last; `device`: "cpu", "cuda", "auto"...). A list of several translation
    runs is an EnsembleTranslator, with the same methods (their vocabularies must be the same:
    CheckpointError naming the two runs otherwise). CheckpointError (one sentence)
    when `path` is not a trained run (naming the run a folder holds), or a file in it is not
    the one its meta.json records. Another task's verb on the result is an AttributeError
    naming this one's: "this is a captioning model, which has no .translate(): use
    .caption(images)"."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        paths = list(path)
        if len(paths) != 1:
            return _load_ensemble(paths, checkpoint, device)
        path = paths[0]
    run_dir = RunDir(path)
    name = choose_checkpoint(run_dir, checkpoint)
    recipe = recipe_of_run(path, name)
    trained = recipe.load(path, name, device=device)
    # A task without a wrapper of its own here is still loaded: its verbs are on .trained.
    wrapper = WRAPPERS.get(recipe.name, LoadedModel)
    return wrapper(Path(path), name, run_dir.read_meta(name), trained)


def _load_ensemble(paths: list[str | os.PathLike], checkpoint: str | None,
                   device: str | torch.device) -> EnsembleTranslator:
    """Several translation runs as one EnsembleTranslator."""
    if not paths:
        raise UserError("attnlab.load of a list needs at least one path")
    for path in paths:
        found = recipe_of_run(path, choose_checkpoint(RunDir(path), checkpoint))
        if found.name != Translator.task:
            raise CheckpointError(f"{path} is a {found.title} run: attnlab.load of several "
                                  f"paths makes an ensemble of translation runs only")
    trained = load_ensemble(paths, checkpoint, device)
    return EnsembleTranslator(Path(paths[0]), trained.checkpoint, trained.meta, trained,
                              [Path(path) for path in paths])
