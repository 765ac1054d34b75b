"""Translation as a training task: what `attnlab.train.train` needs from it."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from torch import nn

from attnlab.data import Batch, BucketBatchSampler, collate
from attnlab.data.store import PairStore
from attnlab.eval import corpus_scores
from attnlab.models import Seq2Seq, build_model
from attnlab.train.distributed import unwrap
from attnlab.train.runs import model_signature
from attnlab.train.task import LossOutput, Validation
from attnlab.train.validation import perplexity, validation_nll
from attnlab.viz import alignment_figure

from .config import RunConfig
from .corpus import (
    VOCAB_FILES,
    EncodedCorpus,
    Vocabularies,
    build_vocabularies,
    check_encoded,
    encode_corpus,
    read_split,
    read_training_pairs,
    stored_training_data,
    uses_store,
)
from .guided import check_soft_attention, corpus_guide
from .translate import translate


class TranslationTask:
    """Reads the data, builds (or reloads) the vocabularies and the model, and scores it.

    run_dir: the run whose vocabularies to reload (a resumed or trained run), or None to train
    them on the training data; nothing is written (`save_files` writes them). Empty training or
    validation data, or none left after the length filter, is a DataError naming the files.
    """

    run_files = VOCAB_FILES
    guides_attention = True  # reads train.guided_alignment

    def __init__(self, config: RunConfig, run_dir: str | Path | None, *, log=print):
        self.config, self.log = config, log
        data, guided = config.data, config.train.guided_alignment
        if guided is not None:
            check_soft_attention(config.model)  # before any data is read
        self.train_data: EncodedCorpus | PairStore
        if uses_store(data, guided is not None):   # never with guided alignment
            self.vocabs, self.train_data = stored_training_data(
                data, None if run_dir is None else Path(run_dir), log)
        else:
            lines = self._read_training_pairs(run_dir)
        log(f"training data: {self.train_data.report.summary()}")
        self.guide = None
        if guided is not None and isinstance(self.train_data, EncodedCorpus):
            self.guide = corpus_guide(guided, data, self.vocabs, self.train_data, lines, log)
        valid_pairs = read_split(data, data.valid)[: data.valid_sentences]
        self.valid_sources = [s for s, _ in valid_pairs]
        self.valid_references = [t for _, t in valid_pairs]
        self.valid_data = check_encoded(encode_corpus(valid_pairs, self.vocabs, None), data,
                                        data.valid, "validation")
        # + 1: the source's EOS, the target's BOS (decoder input) or EOS (labels)
        self.sampler = BucketBatchSampler(self.train_data.lengths() + 1, data.batch_size,
                                          batch_unit=data.batch_unit, shuffle=True,
                                          seed=data.seed)
        self.model = build_model(config.model, len(self.vocabs.src), len(self.vocabs.tgt),
                                 max_src_len=data.max_len + 1)

    def _read_training_pairs(self, run_dir: str | Path | None) -> int:
        """Read the training pairs into Python lists (data.store memory) and build or load
        the vocabularies; returns the number of line pairs read."""
        data = self.config.data
        train_pairs = read_training_pairs(data)
        if run_dir is not None:
            self.vocabs = Vocabularies.load(Path(run_dir))
        else:
            self.vocabs = build_vocabularies(data, train_pairs)
        self.train_data = check_encoded(encode_corpus(train_pairs, self.vocabs, data.max_len),
                                        data, data.train, "training")
        return len(train_pairs)

    def save_files(self, directory: Path) -> None:
        """Write the vocabularies into the run directory."""
        self.vocabs.save(Path(directory))

    def make_batch(self, indices: list[int]) -> Batch:
        """The training pairs' batch: from the lists, or straight from the store's maps."""
        return self.train_data.batch(indices)

    def loss(self, model: nn.Module, batch: Batch) -> LossOutput:
        """The model's loss; in training with guided alignment, plus its term (batch.indices
        are then training pairs; validation batches are not guided)."""
        out = model(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_mask)
        result = cast(Seq2Seq, unwrap(model)).loss(out, batch.tgt_out, batch.tgt_mask,
                                                   self.config.loss.label_smoothing)
        loss = result.loss
        if self.guide is not None and model.training and out.attention is not None:
            loss = loss + self.guide.loss(out.attention, batch.indices)
        return LossOutput(loss, result.nll_sum, result.tokens)

    def validation_batches(self):
        """The validation pairs in corpus order, in batches of decode.batch_size."""
        pairs, size = self.valid_data.pairs, self.config.decode.batch_size
        return (collate(pairs[start : start + size]) for start in range(0, len(pairs), size))

    def validate(self, model: nn.Module) -> Validation:
        """Loss, perplexity, greedy sacreBLEU and exact match on the validation set, and the
        alignment heatmap of its first sentence."""
        model.eval()
        nll, tokens = validation_nll(self.loss, model, self.validation_batches())
        # the loop hands back the task's own model (unwrapped): a Seq2Seq
        translations = translate(cast(Seq2Seq, model), self.vocabs, self.valid_sources,
                                 self.config.decode.greedy())
        hypotheses = [t.text for t in translations]
        scores = corpus_scores(hypotheses, self.valid_references)
        exact = sum(h == r for h, r in zip(hypotheses, self.valid_references, strict=True))
        loss = nll / max(tokens, 1)
        metrics = {"loss": loss, "perplexity": perplexity(loss), "bleu": scores.bleu,
                   "chrf": scores.chrf, "exact_match": 100.0 * exact / max(len(hypotheses), 1)}
        first = translations[0]
        images = {}
        if first.attention is not None:
            images["alignment"] = alignment_figure(first.attention, first.source_pieces,
                                                   first.target_pieces)
        pairs = zip(self.valid_sources[:5], hypotheses[:5], strict=True)
        samples = "\n".join(f"{source}  =>  {output}" for source, output in pairs)
        model.train()
        return Validation(metrics, images, {"samples": samples})

    def signature(self) -> dict:
        return model_signature("translation", self.config.model, src_vocab=len(self.vocabs.src),
                               tgt_vocab=len(self.vocabs.tgt))
