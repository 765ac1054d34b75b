"""Captioning end to end: train a run directory, then load it to caption, evaluate and plot."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from attnlab.config import config_from_dict
from attnlab.data import Vocab, load_vocab
from attnlab.errors import CheckpointError, ConfigError
from attnlab.train.checkpoint import RunDir
from attnlab.train.experiment import experiment_config, run_experiment
from attnlab.train.loop import TrainResult
from attnlab.viz.heatmap import save_figure

from .config import RunConfig
from .data import CaptionSplit, load_image, read_karpathy
from .evaluate import caption_metrics
from .figure import attention_figure
from .inference import Caption, caption_pixels
from .model import Captioner, build_captioner, set_hard_decoding
from .task import VOCAB_NAME, CaptionTask, signature


def load_run_config(path: str | None, run_dir: str | Path, overrides: list[str],
                    resume: bool) -> RunConfig:
    """The captioning config: from `path`, or (resuming without one) from the run directory."""
    return experiment_config(RunConfig, path, run_dir, overrides, resume)


def train_captioning(config: RunConfig, run_dir: str | Path, *, resume: bool = False,
                     progress: bool = True, log=print) -> TrainResult:
    """Build the task and train; the vocabulary, config and checkpoints go to `run_dir`."""
    return run_experiment(lambda log: CaptionTask(config, Path(run_dir), log=log), config,
                          run_dir, resume=resume, progress=progress, log=log)


@dataclass
class TrainedCaptioner:
    """A run directory's config, vocabulary and model (in eval mode)."""

    config: RunConfig
    vocab: Vocab
    model: Captioner

    def caption_files(self, paths: list[str | Path], *, beam: int | None = None
                      ) -> list[tuple[torch.Tensor, Caption]]:
        """Each image's resized pixels (S, S, 3) uint8 and its beam-search caption."""
        size = self.config.data.image_size
        pixels = torch.stack([torch.from_numpy(load_image(path, size)[0]) for path in paths])
        captions = caption_pixels(self.model, pixels, self.vocab, self.config.data,
                                  self.config.decode, beam=beam)
        return list(zip(pixels, captions, strict=True))


def load_trained(run_dir: str | Path, checkpoint: str = "best", *,
                 hard_decoding: str | None = None) -> TrainedCaptioner:
    """Load a trained run; `best` falls back to `last` when no validation metric chose one.
    hard_decoding: "expectation" or "argmax" instead of the run's decode.hard_attention."""
    directory = RunDir(run_dir)
    if not directory.file("config.json").is_file():
        raise CheckpointError(f"{run_dir} is not a captioning run directory (no config.json)")
    config = config_from_dict(directory.read_config(), RunConfig,
                              origin=str(directory.file("config.json")))
    vocab = load_vocab(directory.path, VOCAB_NAME)
    model = build_captioner(config.model, len(vocab), config.data.image_size)
    if checkpoint == "best" and not directory.has_checkpoint("best"):
        checkpoint = "last"
    directory.load_checkpoint(checkpoint, model, signature(config, len(vocab)))
    config.decode.hard_attention = hard_decoding or config.decode.hard_attention
    set_hard_decoding(model, config.decode.hard_attention)
    model.eval()
    return TrainedCaptioner(config, vocab, model)


def evaluate_split(trained: TrainedCaptioner, split: str | None = None, *,
                   beam: int | None = None, limit: int | None = None
                   ) -> tuple[dict[str, float], str, int]:
    """Beam-search captions for a split's images (default the test split; the first `limit`)
    -> (metrics, BLEU signature, images scored). See `caption_metrics` for the metrics."""
    data = trained.config.data
    split = split or data.test_split
    images = [image for image in read_karpathy(data.json) if image.split == split][:limit]
    if not images:
        raise ConfigError(f"{data.json} has no images in split {split!r}")
    chosen = CaptionSplit(images, data.images, data.image_size, cache=False)
    captions = caption_pixels(trained.model, chosen.pixels(), trained.vocab, data,
                              trained.config.decode, beam=beam)
    metrics, bleu_signature = caption_metrics(
        [c.words for c in captions], [c.attention.numpy() for c in captions],
        chosen.references(), chosen.boxes(), data.image_size)
    return metrics, bleu_signature, len(images)


def plot_caption(trained: TrainedCaptioner, image: str | Path, output: str | Path, *,
                 beam: int | None = None) -> tuple[Caption, Path]:
    """Caption one image and draw where each word looked; hard-attention models get the most
    likely location marked (the argmax of alpha_t: what a sample hits most often, and the
    location actually read with decode.hard_attention = argmax)."""
    pixels, caption = trained.caption_files([image], beam=beam)[0]
    if not caption.words:
        raise ConfigError(f"the model produced an empty caption for {image}: nothing to plot")
    attention = caption.attention.numpy()
    marks = None
    if trained.config.model.decoder.attention.hard:
        width = attention.shape[2]
        flat = attention.reshape(len(caption.words), -1).argmax(-1)
        marks = [(int(i) // width, int(i) % width) for i in flat]
    kind = "hard" if marks is not None else "soft"
    figure = attention_figure(pixels.numpy(), caption.words, attention, marks=marks,
                              title=f"{Path(image).name} ({kind} attention)")
    return caption, save_figure(figure, output)
