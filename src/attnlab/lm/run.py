"""A trained language model (an LSTMN or an LSTM), loaded back to score text and to show how
the LSTMN reads.

    run = LanguageModelRun.load("runs/lm-lstmn")
    run.perplexity(["A man is sleeping ."]).perplexity
    run.read("A man is sleeping .").weights          # (layers, T, T)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from pydantic import BaseModel, Field

from attnlab.data import Vocab, load_vocab
from attnlab.errors import DataError, UserError
from attnlab.models import LanguageModel, build_language_model
from attnlab.train.runs import listed, load_weights, open_run
from attnlab.train.trained import Request, Run
from attnlab.viz import SentenceReading

from .config import LMRunConfig
from .corpus import VOCAB_NAME, encode_text
from .evaluate import PerplexityResult, text_perplexity
from .reading import read_with_language_model
from .task import TASK, model_signature


class ReadRequest(Request):
    """The LSTMN's self-attention while it reads a sentence."""

    run: str = Field(description="a language-model run's name (an LSTMN)")
    text: str = Field(description="the sentence to read; not blank, at most max_tokens pieces")


class ReadResponse(BaseModel):
    tokens: list[str] = Field(description='"<s>" then the sentence\'s pieces, in reading order')
    weights: list[list[float]] = Field(description="step x step, the last layer: row t holds "
                                       "step t's attention over the positions i < t")


@dataclass(repr=False)
class LanguageModelRun(Run):
    """A language-model run's model (eval mode), vocabulary and config."""

    task: ClassVar[str] = TASK
    kind: ClassVar[str] = "a language model"
    verbs: ClassVar[dict[str, str]] = {"perplexity": ".perplexity(lines)",
                                       "read": ".read(sentence)"}
    evaluate_options: ClassVar[tuple[str, ...]] = ("text", "batch_size")
    plot_options: ClassVar[tuple[str, ...]] = ("matrix", "layer")
    plot_example: ClassVar[str] = '"A man is sleeping ."'
    request: ClassVar[type[Request]] = ReadRequest
    response: ClassVar[type[BaseModel] | None] = ReadResponse

    config: LMRunConfig
    model: LanguageModel
    vocab: Vocab

    @classmethod
    def load(cls, path: str | os.PathLike, checkpoint: str | None = None, *,
             device: str | torch.device = "cpu") -> LanguageModelRun:
        run = open_run(path, LMRunConfig, checkpoint, task=TASK)
        vocab = load_vocab(run.path, VOCAB_NAME)
        model = build_language_model(run.config.model, len(vocab),
                                     max_len=run.config.data.max_len + 1)
        load_weights(run, model, model_signature(run.config, vocab), device)
        return cls(run.path, run.checkpoint, run.meta, run.config, model, vocab)

    @classmethod
    def plot_name(cls, example: str) -> str:
        return "self-attention.png"

    @property
    def reads_with_attention(self) -> bool:
        """Whether it is an LSTMN (an LSTM has no self-attention to show)."""
        return self.config.model.kind == "lstmn"

    def read(self, sentence: str) -> SentenceReading:
        """What an LSTMN attends to reading <s> w_1 .. w_n: tokens and weights
        (layers, T, T), row t the weights over the tokens before t."""
        return read_with_language_model(self.model, self.vocab, sentence)

    def pieces(self, text: str) -> int:
        return len(self.vocab.tokenize(text))

    def settle(self, request: ReadRequest, limits: Mapping[str, float]) -> ReadRequest:
        if not self.reads_with_attention:
            raise UserError(f"this is an {self.config.model.kind} language model; only an "
                            f"LSTMN has self-attention to show")
        return request

    def answer(self, request: ReadRequest) -> dict[str, Any]:
        """{"tokens", "weights"}: the reading's last layer, row t over positions i < t."""
        reading = self.read(request.text)
        return {"tokens": reading.tokens, "weights": reading.weights[-1].tolist()}

    def perplexity(self, lines: Iterable[str], *, batch_size: int | None = None,
                   progress: bool = False, source: str = "the lines") -> PerplexityResult:
        """Per-token perplexity of the sentences (EOS counted); empty lines and those over the
        run's data.max_len pieces are skipped and counted; `batch_size` sentences a batch
        (default the run's data.batch_size, as validation reads)."""
        lines = listed(lines, "perplexity", "lines")
        max_len = self.config.data.max_len
        encoded = encode_text(lines, self.vocab, max_len)
        if not encoded.sentences:
            raise DataError(f"no sentence to score in {source} ({encoded.summary()}); "
                            f"perplexity needs at least one non-empty line of at most "
                            f"{max_len} pieces")
        return text_perplexity(self.model, encoded, batch_size or self.config.data.batch_size,
                               self.checkpoint, progress)

    def evaluate(self, *, text: str | os.PathLike | None = None,
                 batch_size: int | None = None, progress: bool = False,
                 log: Callable[[str], None] = print, **overrides: Any) -> PerplexityResult:
        """Perplexity on the file `text` (plain or .gz, one sentence a line; default: the
        run's data.test)."""
        from attnlab.data import read_lines

        if overrides:
            raise UserError(f"a language model has no decode settings "
                            f"({', '.join(sorted(overrides))})")
        data = self.config.data
        if text is None and data.test is None:
            raise UserError("no text to evaluate: give one (--text), or set data.test in the "
                            "run's config")
        path = text if text is not None else data.path(str(data.test))
        return self.perplexity(read_lines(path), batch_size=batch_size, progress=progress,
                               source=str(path))

    def plot(self, example: str, output: str | os.PathLike, *, matrix: str | None = None,
             layer: int | None = None, **overrides: Any) -> list[str]:
        """The LSTMN reading figure of the sentence `example` into `output`, and its weight
        matrix (default: the output's name with -matrix); `layer` from 1 (default: the top)."""
        from .figure import plot_reading_to

        if overrides:
            raise UserError(f"a language model's reading figure has no decode settings "
                            f"({', '.join(sorted(overrides))})")
        figure, weights = plot_reading_to(self.read(example), self.path, output, matrix, layer)
        return [f"reading figure: {figure}", f"weight matrix: {weights}"]
