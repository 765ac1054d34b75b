"""Language modelling as a training task: what `attnlab.train.train` needs from it."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from attnlab.data import BucketBatchSampler, Vocab
from attnlab.models import build_language_model, count_parameters
from attnlab.train.distributed import unwrap
from attnlab.train.runs import model_signature as signature_of
from attnlab.train.task import LossOutput, Validation
from attnlab.train.validation import perplexity, validation_nll
from attnlab.viz import self_attention_figure
from attnlab.viz.heatmap import figure_to_array

from .config import LMRunConfig
from .corpus import (
    VOCAB_FILES,
    VOCAB_NAME,
    TextBatch,
    check_encoded,
    collate_text,
    encode_text,
    load_or_build_vocab,
    read_text,
    read_training_text,
)
from .reading import read_with_language_model

TASK = "lm"


def batch_nll(model: nn.Module, batch: TextBatch) -> torch.Tensor:
    """Summed negative log-likelihood of the batch's real target tokens (a scalar tensor)."""
    logits = model(batch.inputs, batch.mask).logits  # (N, V): real positions
    return F.cross_entropy(logits, batch.targets[batch.mask], reduction="sum")


def sentence_loss(model: nn.Module, batch: TextBatch) -> LossOutput:
    """Per-token NLL of a batch (and its sum and token count, for perplexity)."""
    nll = batch_nll(model, batch)
    tokens = batch.num_target_tokens
    return LossOutput(nll / max(tokens, 1), nll.detach(), tokens)


def text_nll(model: nn.Module, sentences: list[list[int]], batch_size: int) -> tuple[float, int]:
    """Summed NLL and token count (EOS included) of encoded sentences, batched by length."""
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    batches = (collate_text([sentences[i] for i in order[start : start + batch_size]])
               for start in range(0, len(order), batch_size))
    return validation_nll(sentence_loss, model, batches)


def model_signature(config: LMRunConfig, vocab: Vocab) -> dict:
    """What a checkpoint must have been trained as to load into this model."""
    return signature_of(TASK, config.model, vocab=len(vocab), max_len=config.data.max_len)


class LanguageModelTask:
    """Reads the text, builds the vocabulary (or reloads it from `run_dir`; None: trained on
    the text, written only by `save_files`), builds the model. Empty training or validation
    text, or none left after the length filter, is a DataError naming the file."""

    run_files = VOCAB_FILES
    guides_attention = False  # train.guided_alignment is translation's

    def __init__(self, config: LMRunConfig, run_dir: str | Path | None, *, log=print):
        self.config, data = config, config.data
        train_lines = read_training_text(data)
        self.vocab = load_or_build_vocab(data, train_lines,
                                         None if run_dir is None else Path(run_dir))
        self.train_data = check_encoded(encode_text(train_lines, self.vocab, data.max_len),
                                        data, data.train, "training")
        log(f"training data: {self.train_data.summary()}")
        valid_lines = read_text(data, data.valid)[: data.valid_sentences]
        self.valid_data = check_encoded(encode_text(valid_lines, self.vocab, data.max_len),
                                        data, data.valid, "validation")
        self.first_valid = next((line for line in valid_lines if line.strip()), None)
        lengths = [len(s) + 1 for s in self.train_data.sentences]
        self.sampler = BucketBatchSampler(lengths, data.batch_size, batch_unit=data.batch_unit,
                                          shuffle=True, seed=data.seed)
        self.model = build_language_model(config.model, len(self.vocab),
                                          max_len=data.max_len + 1)
        log(f"model: {config.model.kind}, {count_parameters(self.model):,} parameters")

    def save_files(self, directory: Path) -> None:
        """Write the vocabulary into the run directory."""
        self.vocab.save(directory, VOCAB_NAME)

    def make_batch(self, indices: list[int]) -> TextBatch:
        return collate_text([self.train_data.sentences[i] for i in indices], indices)

    def loss(self, model: nn.Module, batch: TextBatch) -> LossOutput:
        return sentence_loss(model, batch)

    def validate(self, model: nn.Module) -> Validation:
        """Per-token loss and perplexity on the validation text; for an LSTMN, the reading
        figure of the first validation sentence (top layer)."""
        model = unwrap(model)
        nll, tokens = text_nll(model, self.valid_data.sentences, self.config.data.batch_size)
        loss = nll / max(tokens, 1)
        metrics = {"loss": loss, "perplexity": perplexity(loss)}
        images = {}
        if self.first_valid is not None and self.config.model.kind == "lstmn":
            reading = read_with_language_model(model, self.vocab, self.first_valid)
            figure = self_attention_figure(reading.tokens, reading.weights[-1])
            images["self_attention"] = figure_to_array(figure)
        return Validation(metrics, images)

    def signature(self) -> dict:
        return model_signature(self.config, self.vocab)
