"""A trained translation run, or an ensemble of them, ready to decode: its config,
vocabularies and the `best` or `last` weights, with the task's verbs.

    run = TranslationRun.load("runs/bahdanau")     # best checkpoint if there is one, else last
    run.translate(lines, beam=5)[0].text           # TranslationResult per line, input order
    run.stream(open("big.txt"))                    # the same, lazily, a pool at a time
    TranslationRun.load(["runs/seed-1", "runs/seed-2"]).translate(lines)   # an ensemble

Loading needs only the run directory (config.json, src_vocab.*, tgt_vocab.*, best/ or last/),
never the training data.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

import numpy as np
import torch
from pydantic import BaseModel, Field

from attnlab.decode import Ensemble
from attnlab.errors import CheckpointError, UserError
from attnlab.explain.explanation import Explanation, ForcedText, explain_pair, method_names
from attnlab.explain.methods import METHODS, STEPS
from attnlab.models import Seq2Seq, build_model
from attnlab.models.quantize import quantize_int8
from attnlab.train.runs import listed, load_weights, open_run
from attnlab.train.trained import Request, Run, Whole
from attnlab.viz import SentenceReading

from .config import DecodeConfig, RunConfig
from .corpus import Vocabularies
from .ensemble import check_same_vocabularies, with_member_attention
from .evaluate import Evaluation
from .explain_request import checked_pieces, checked_steps, checked_text
from .heads import HeadedTranslation
from .translate import TranslationResult, iter_translate, translate
from .unknown import UnknownWords, read_dictionary

Dictionary = str | os.PathLike | Mapping[str, str] | None


class TranslateRequest(Request):
    """Translate one sentence: n-best hypotheses with their attention."""

    run: str = Field(description="a translation run's name, as GET /api/runs lists it")
    text: str = Field(description="the sentence to translate; not blank, at most max_tokens "
                      "source pieces")
    beam: Whole | None = Field(None, description="beam size, 1 (greedy) to max_beam; default: "
                             "the run's decode.beam, raised to nbest")
    nbest: Whole = Field(1, description="how many hypotheses to return, best first; at most beam")
    level: Literal["word", "piece"] = Field(
        "word", description="label attention by words (pieces of a word merged: source "
        "columns summed, target rows averaged) or by the model's own pieces")
    heads: bool = Field(False, description="also return each hypothesis' cross-attention of "
                        "every layer and head (a Transformer's; refused for a model without "
                        "heads, see GET /api/runs)")


class Hypothesis(BaseModel):
    text: str = Field(description="the translation")
    score: float = Field(description="log-probability divided by the GNMT length penalty; "
                         "hypotheses are sorted by it, best first")
    tokens: list[str] = Field(description='target words or pieces; "</s>" last when the '
                              "hypothesis finished")
    source_tokens: list[str] = Field(description='source words or pieces, "</s>" last')
    attention: list[list[float]] | None = Field(
        description="one row per target token, one column per source token: the weights that "
        "produced the token (each row sums to 1); null for a model without attention")
    heads: list[list[list[list[float]]]] | None = Field(
        None, description="with heads: true, every layer and head's cross-attention (layers, "
        "heads, target tokens, source tokens); attention is the last layer's mean over heads")


class TranslateResponse(BaseModel):
    hypotheses: list[Hypothesis] = Field(description="the n-best list, best first")


@dataclass(repr=False)
class TranslationRun(Run):
    """A translation run's model (eval mode, on its device), vocabularies and config; an
    ensemble's `model` is its members' Ensemble (each step the mean of their log-probabilities,
    the attention their mean), its config, vocabularies, path and checkpoint the first
    member's, `members` each run in order (empty for a single run)."""

    task: ClassVar[str] = "translation"
    kind: ClassVar[str] = "a translation model"
    verbs: ClassVar[dict[str, str]] = {"translate": ".translate(lines)",
                                       "stream": ".stream(lines)",
                                       "explain": ".explain(sentence)"}
    evaluate_options: ClassVar[tuple[str, ...]] = (
        "src", "ref", "align_gold", "align_format", "rwth", "no_rwth", "buckets")
    evaluate_outputs: ClassVar[tuple[str, ...]] = ("hypotheses", "bucket_plot")
    plot_options: ClassVar[tuple[str, ...]] = ("pieces", "layer", "head", "heads_grid")
    plot_example: ClassVar[str] = '"Zwei Männer spielen Fußball."'
    quantizable: ClassVar[bool] = True
    ensembles: ClassVar[bool] = True
    request: ClassVar[type[Request]] = TranslateRequest
    response: ClassVar[type[BaseModel] | None] = TranslateResponse

    config: RunConfig
    model: Seq2Seq
    vocabs: Vocabularies
    members: list[TranslationRun] = field(default_factory=list)
    quantization: str | None = None  # "int8" once .quantized("int8") made it

    @classmethod
    def load(cls, path: str | os.PathLike | Sequence[str | os.PathLike],
             checkpoint: str | None = None, *,
             device: str | torch.device = "cpu") -> TranslationRun:
        """One run directory or exported model, or a list of several: their ensemble (their
        vocabularies must be the same: a CheckpointError naming the two runs otherwise)."""
        if isinstance(path, (str, bytes, os.PathLike)):
            return _load_one(path, checkpoint, device)
        paths = list(path)
        if not paths:
            raise UserError("an ensemble needs at least one run")
        if len(paths) == 1:
            return _load_one(paths[0], checkpoint, device)
        check_same_vocabularies(paths)
        return _ensemble_of([_load_one(one, checkpoint, device) for one in paths])

    @classmethod
    def plot_name(cls, example: str) -> str:
        return "alignment.png"

    @property
    def paths(self) -> list[Path]:
        """Its run directories: one, or each member's."""
        return [member.path for member in self.members] or [self.path]

    def __repr__(self) -> str:
        paths = ", ".join(repr(str(path)) for path in self.paths)
        where = f"[{paths}]" if self.members else paths
        return (f"TranslationRun({where}, checkpoint={self.checkpoint!r}, "
                f"step={self.meta.get('step', '?')})")

    @property
    def name(self) -> str:
        """'runs/a' or, for an ensemble, 'runs/a + runs/b'."""
        return " + ".join(str(path) for path in self.paths)

    @property
    def description(self) -> str:
        """"bahdanau / additive, global; trained on dates of 1000-2099 (...)"."""
        from .describe import describe_run

        return describe_run(self.config)

    @property
    def example(self) -> str:
        """A sentence to open the explorer with (its data's first validation source)."""
        from .describe import example_sentence

        return example_sentence(self.config)

    @property
    def has_attention(self) -> bool:
        if self.members:
            return any(member.has_attention for member in self.members)
        return self.config.model.decoder.kind != "none"

    @property
    def head_shape(self) -> tuple[int, int] | None:
        """(layers, heads) of its cross-attention, asked of the model (a Transformer's), or
        None: a model whose attention has no layers and heads, or an ensemble."""
        from .heads import head_shape

        return head_shape(self.model)

    def heads(self, sentence: str, layer: int | str | None = None,
              head: int | str | None = None, decode: DecodeConfig | None = None,
              **overrides: Any) -> HeadedTranslation:
        """The translation of `sentence` (as translate) with every layer and head of its
        cross-attention, showing `layer` and `head` (from 1; head "mean": the layer's mean;
        default the last layer's mean): see translation/heads.py."""
        from .heads import checked_choice, headed

        choice = checked_choice(self.model, layer, head)
        result = self.translate([checked_text(sentence, "sentence")], decode, **overrides)[0]
        return headed(self.model, self.vocabs, sentence, result, choice)

    @property
    def character_level(self) -> bool:
        """Whether the run reads characters; then a character is its unit of alignment, since
        the gold alignments of such tasks (the dates task) link characters."""
        return self.config.data.vocab == "char"

    def quantized(self, kind: str | None) -> TranslationRun:
        """This run with its model's linear and recurrent layers in `kind` ("int8": dynamic
        quantization, for the CPU; None: the run as it is)."""
        if kind is None:
            return self
        if kind != "int8":
            raise UserError(f"unknown quantization {kind!r}: only int8 is available")
        if next(self.model.parameters()).device.type != "cpu":
            raise UserError("int8 quantization runs on the CPU: give --device cpu")
        if self.members:
            return _ensemble_of([member.quantized(kind) for member in self.members])
        return replace(self, model=cast(Seq2Seq, quantize_int8(self.model)),  # a copy
                       quantization=kind)

    def translate(self, lines: Sequence[str], decode: DecodeConfig | None = None, *,
                  replace_unk: bool = False, dictionary: Dictionary = None,
                  member_attention: bool = False, **overrides: Any) -> list[TranslationResult]:
        """One TranslationResult per line (text, score, tokens, attention; with n_best > 1 its
        alternatives), in input order. `decode`: the settings (the run's when None), with
        `overrides` by name in their place (DecodeConfig.overridden: beam, n_best, alpha, beta,
        length_penalty, batch_size...; without a beam the run's widens to n_best).
        replace_unk: each <unk> of the text becomes the source unit it attends to most, or its
        entry in `dictionary` (a file of 'source target' lines, or a mapping), n-best
        included. member_attention: each hypothesis also carries `.member_attention`, each
        member's own (T, S) attention (a single model's: [its attention])."""
        decode = self.decode_settings(decode, **overrides)
        unknown = self.unknown_words(replace_unk, dictionary)
        lines = listed(lines, "translate", "lines")
        found = translate(self.model, self.vocabs, lines, decode)
        if unknown is not None:
            found = [unknown.replace(result) for result in found]
        if member_attention:
            found = [with_member_attention(self, line, result)
                     for line, result in zip(lines, found, strict=True)]
        return found

    def stream(self, lines: Iterable[str], decode: DecodeConfig | None = None, *,
               pool_size: int | None = None, tick: Callable[[int], None] | None = None,
               replace_unk: bool = False, dictionary: Dictionary = None,
               member_attention: bool = False, **overrides: Any) -> Iterator[TranslationResult]:
        """As translate, lazily: `pool_size` lines are read and decoded at a time (1 answers
        each line as soon as it is read; default 100 batches), so a long file never sits in
        memory whole; tick(n) as each n lines are decoded."""
        decode = self.decode_settings(decode, **overrides)
        unknown = self.unknown_words(replace_unk, dictionary)
        if member_attention:
            return self._stream_with_members(lines, decode, pool_size, tick, unknown)
        found = iter_translate(self.model, self.vocabs, lines, decode, pool_size=pool_size,
                               tick=tick)
        return found if unknown is None else (unknown.replace(result) for result in found)

    def _stream_with_members(self, lines: Iterable[str], decode: DecodeConfig,
                             pool_size: int | None, tick: Callable[[int], None] | None,
                             unknown: UnknownWords | None) -> Iterator[TranslationResult]:
        pending: deque[str] = deque()  # lines read, not yet answered (results come in order)

        def remember() -> Iterator[str]:
            for line in lines:
                pending.append(line)
                yield line

        for result in iter_translate(self.model, self.vocabs, remember(), decode,
                                     pool_size=pool_size, tick=tick):
            result = result if unknown is None else unknown.replace(result)
            yield with_member_attention(self, pending.popleft(), result)

    def decode_settings(self, decode: DecodeConfig | None = None,
                        **overrides: Any) -> DecodeConfig:
        """`decode` (the run's when None) with `overrides` in their place, checked: the
        coverage penalty needs attention."""
        decode = (decode or self.config.decode).overridden(**overrides)
        decode.penalty()  # an invalid length penalty or a negative beta: one sentence
        if decode.beta and not self.has_attention:
            raise UserError("the coverage penalty (beta) is computed from attention, and this "
                            "model has none")
        return decode

    def pieces(self, text: str) -> int:
        return len(self.vocabs.src.tokenize(text))

    def target_pieces(self, text: str) -> int:
        """How many target pieces `text` is (explain's forced target)."""
        return len(self.vocabs.tgt.tokenize(text))

    def settle(self, request: TranslateRequest, limits: Mapping[str, float]) -> TranslateRequest:
        """The request with the run's decode settings where it gives none, its beam at most
        limits["max_beam"]."""
        if request.heads and self.head_shape is None:
            from .heads import NO_HEADS

            raise UserError(f"heads: {NO_HEADS}")
        decode = self.decode_settings(beam=request.beam, n_best=request.nbest)
        beam = min(decode.beam, int(limits.get("max_beam", decode.beam)))
        return request.model_copy(update={"beam": beam, "nbest": decode.n_best})

    def batch_key(self, request: TranslateRequest) -> tuple:
        return request.beam, request.nbest, request.level, request.heads

    def answer_batch(self, requests: Sequence[TranslateRequest]
                     ) -> list[dict[str, Any] | UserError]:
        """{"hypotheses": [...]} per request, all in one batched beam search."""
        first = requests[0]  # a batch shares beam, nbest and level (batch_key)
        found = self.translate([request.text for request in requests], beam=first.beam,
                               n_best=first.nbest, batch_size=len(requests))
        if first.heads:  # one teacher-forced pass per hypothesis (translation/heads.py)
            from .heads import headed, level_heads

            headed_ones = [headed(self.model, self.vocabs, request.text, result)
                           for request, result in zip(requests, found, strict=True)]
            return [{"hypotheses": [{**_hypothesis(h, first.level),
                                     "heads": level_heads(h, first.level)}
                                    for h in result.headed_hypotheses]}
                    for result in headed_ones]
        return [{"hypotheses": [_hypothesis(h, first.level) for h in result.hypotheses]}
                for result in found]

    def unknown_words(self, replace_unk: bool, dictionary: Dictionary) -> UnknownWords | None:
        """The replacement replace_unk asks for (None: none), its dictionary read."""
        if not replace_unk:
            if dictionary is not None:
                raise UserError("a dictionary is for unknown-word replacement: give "
                                "replace_unk (--replace-unk) too")
            return None
        if not self.has_attention:
            raise UserError("unknown-word replacement copies the source word an <unk> attends "
                            "to most, and this model has no attention")
        if dictionary is None or isinstance(dictionary, Mapping):
            return UnknownWords(self.vocabs.src, dict(dictionary or {}))
        return UnknownWords(self.vocabs.src, read_dictionary(dictionary))

    def evaluate(self, *, src: str | os.PathLike | None = None,
                 ref: str | os.PathLike | None = None, align_gold: str | None = None,
                 align_format: str = "text", rwth: str | None = None, no_rwth: bool = False,
                 buckets: tuple[float, ...] | None = None, decode: DecodeConfig | None = None,
                 replace_unk: bool = False, dictionary: Dictionary = None,
                 progress: bool = False, log: Callable[[str], None] = print,
                 **overrides: Any) -> Evaluation:
        """Translate `src` (default: the run's test split) and score it against `ref`: BLEU,
        chrF, BLEU by source length, and AER on the gold sets that apply (see
        alignment/golds.py); the header lines go to `log`. An Evaluation (format, to_dict,
        outputs)."""
        from attnlab.eval import DEFAULT_EDGES

        from .alignment import choose_golds
        from .evaluate import evaluate_run, read_pairs

        decode = self.decode_settings(decode, **overrides)
        sources, references, src_path = read_pairs(self, src, ref)
        golds = choose_golds(self, src_path, sources, references, align_gold=align_gold,
                             one_indexed=align_format == "rwth", rwth=rwth,
                             use_rwth=not no_rwth)
        log(f"{self.name} ({self.checkpoint} checkpoint, {decode.describe()}) on {src_path}")
        log(golds.line())
        # a bad dictionary before the decoding, read once: the decoding takes what was read
        unknown = self.unknown_words(replace_unk, dictionary)
        return evaluate_run(self, sources, references, decode=decode,
                            edges=buckets or DEFAULT_EDGES, golds=golds.golds,
                            progress=progress, replace_unk=replace_unk,
                            dictionary=None if unknown is None else unknown.dictionary)


    def plot(self, example: str, output: str | os.PathLike, *, pieces: bool | None = None,
             layer: int | str | None = None, head: int | str | None = None,
             heads_grid: bool = False, decode: DecodeConfig | None = None,
             **overrides: Any) -> list[str]:
        """Translate the sentence `example` and draw its attention heatmap into `output`
        (pieces=None: characters for a character-level run, else words); a Transformer's
        `layer` and `head` (from 1; head "mean"; default the last layer's mean), or with
        heads_grid every layer x head (see translation/heads.py)."""
        from .figure import plot_sentence

        result, note = plot_sentence(self, example, output, pieces=pieces, layer=layer,
                                     head=head, heads_grid=heads_grid,
                                     decode=self.decode_settings(decode, **overrides))
        what = "heads grid" if heads_grid else "heatmap"
        lines = [f"{example} -> {result.text}", f"{what}: {output}"]
        if note:
            lines.append(f"note: {note}; plot a shorter sentence (or --words rather than "
                         f"--pieces) to read every label")
        return lines

    def explain(self, sentence: str, target: str | None = None, *,
                methods: Sequence[str] = METHODS, steps: int = STEPS,
                decode: DecodeConfig | None = None, **overrides: Any) -> Explanation:
        """Attention beside three attributions of one output (attnlab.explain): of the
        translation of `sentence` (decoded with `decode` and `overrides`, as translate), or of
        `target` when given (forced). `methods`: any of gradient, integrated_gradients,
        erasure; `steps`: integrated gradients' points."""
        if self.members:
            raise UserError("explain attributes one model's output to its own source "
                            "embeddings: give one run, not an ensemble")
        sentence = checked_text(sentence, "sentence")
        if target is not None:
            target = checked_text(target, "target", empty=True)
        if isinstance(methods, str):
            methods = [methods]   # one method named alone, not its letters
        try:
            methods = method_names(methods)
        except ValueError as error:
            raise UserError(str(error)) from None
        steps = checked_steps(steps)
        gradients = [name for name in methods if name != "erasure"]
        if self.quantization and gradients:
            raise UserError(f"{gradients[0]} needs gradients, and this model runs in "
                            f"{self.quantization}, whose layers have none: explain it with "
                            f"methods=['erasure'] (--method erasure), or load it unquantized")
        source_ids = self.vocabs.src.encode(sentence)
        checked_pieces(source_ids, self.vocabs.src.tokenize(sentence), "sentence", True)
        if target is not None:
            checked_pieces(self.vocabs.tgt.encode(target), self.vocabs.tgt.tokenize(target),
                           "target", False)
        limit = self.model.max_source_length
        if limit is not None and len(source_ids) + 1 > limit:
            raise UserError(f"the sentence has {len(source_ids) + 1} source positions (EOS "
                            f"included); this model reads at most {limit}")
        vocabs = (self.vocabs.src, self.vocabs.tgt)
        if target is None:
            result = self.translate([sentence], decode, **overrides)[0]
            pair = ForcedText.of(*vocabs, sentence, result.text, result.tokens)
        else:
            pair = ForcedText.of(*vocabs, sentence, target)
        return explain_pair(self.model, pair, methods=methods, steps=steps)

    def read(self, sentence: str) -> SentenceReading:
        """How an LSTMN encoder reads `sentence`: tokens and weights (layers, S, S)."""
        from .reading import read_with_encoder

        return read_with_encoder(self.model, self.vocabs.src, sentence)

    def report(self, output: str | os.PathLike, *, src: str | None = None,
               ref: str | None = None, rwth: str | None = None, no_rwth: bool = False,
               samples: int = 3, progress: bool = False, decode: DecodeConfig | None = None,
               **overrides: Any) -> Path:
        """One self-contained HTML page about the run (see report.py), evaluated on src/ref or
        else its validation split, decoding with `decode` and `overrides` (as translate)."""
        from .alignment import rwth_gold_for_run
        from .evaluate import read_pairs
        from .report import write_run_report

        decode = self.decode_settings(decode, **overrides)
        sources = references = src_path = None
        if src is not None or ref is not None:
            sources, references, src_path = read_pairs(self, src, ref)
        gold = None if no_rwth else rwth_gold_for_run(self, rwth)
        return write_run_report(self, output, sources=sources, references=references,
                                src_path=src_path, ref_path=ref, decode=decode,
                                samples=samples, golds=[gold] if gold is not None else [],
                                progress=progress)


def _hypothesis(result: TranslationResult, level: str) -> dict[str, Any]:
    """One hypothesis as the explorer's JSON, at word or piece level."""
    if level == "word":
        tokens, source, attention = (result.target_words, result.source_words,
                                     result.word_attention)
    else:
        tokens, source, attention = (result.target_pieces, result.source_pieces,
                                     result.attention)
    return {"text": result.text, "score": float(result.score), "tokens": list(tokens),
            "source_tokens": list(source),
            "attention": None if attention is None else np.asarray(attention).tolist()}


def _ensemble_of(members: list[TranslationRun]) -> TranslationRun:
    """The members as one run: the first's config, vocabularies and path, their Ensemble as its
    model (an Ensemble offers what decoding asks of a Seq2Seq: start, step, all_positions)."""
    ensemble = cast(Seq2Seq, Ensemble([member.model for member in members]))
    return replace(members[0], model=ensemble, members=members)


def _load_one(directory: str | os.PathLike, checkpoint: str | None,
              device: str | torch.device) -> TranslationRun:
    """Load a run directory's config, vocabularies and weights into a model in eval mode."""
    run = open_run(directory, RunConfig, checkpoint, task=TranslationRun.task)
    if not Vocabularies.exist_in(run.path):
        raise CheckpointError(f"run directory {run.path} has no vocabularies "
                              f"(src_vocab.json, tgt_vocab.json)")
    vocabs = Vocabularies.load(run.path)
    model = build_model(run.config.model, len(vocabs.src), len(vocabs.tgt),
                        max_src_len=run.config.data.max_len + 1)
    load_weights(run, model, device=device)
    return TranslationRun(run.path, run.checkpoint, run.meta, run.config, model, vocabs)
