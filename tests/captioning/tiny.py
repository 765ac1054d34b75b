"""Tiny captioning configs and models shared by the captioning tests."""

import torch

from attnlab.captioning.config import RunConfig
from attnlab.config import load_config
from attnlab.data import BOS_ID, PAD_ID, SPECIAL_PIECES
from attnlab.models import CaptionerConfig, build_captioner


def tiny_model_config(**attention) -> CaptionerConfig:
    """A 2-stage CNN (32 px -> 8 x 8 grid, 8 + 2 channels) and a 12-unit LSTM."""
    data = {"encoder": {"channels": [4, 8]},
            "decoder": {"embedding_dim": 6, "hidden_dim": 12, "dropout": 0.0,
                        "attention": {"score": "additive", "hidden_dim": 5, **attention}}}
    return load_config(data, CaptionerConfig)


def tiny_model(vocab_size=9, image_size=32, seed=0, **attention):
    torch.manual_seed(seed)
    return build_captioner(tiny_model_config(**attention), vocab_size, image_size)


def tiny_batch(batch=4, length=5, vocab_size=9, image_size=32, seed=0):
    """images (B, 3, S, S), tgt_in, tgt_out (B, T) and a mask with ragged lengths."""
    gen = torch.Generator().manual_seed(seed)
    images = torch.randn(batch, 3, image_size, image_size, generator=gen)
    tokens = torch.randint(len(SPECIAL_PIECES), vocab_size, (batch, length + 1), generator=gen)
    lengths = torch.tensor([length - (i % 3) for i in range(batch)])
    mask = torch.arange(length).unsqueeze(0) < lengths.unsqueeze(1)
    tgt_in, tgt_out = (t.masked_fill(~mask, PAD_ID) for t in (tokens[:, :-1], tokens[:, 1:]))
    tgt_in[:, 0] = BOS_ID
    return images, tgt_in, tgt_out, mask


def tiny_run_config(data_dir, **train) -> RunConfig:
    """A run on a shapes folder written by write_shapes(data_dir, image_size=32)."""
    data = {
        "data": {"json": str(data_dir / "dataset_shapes.json"), "images": str(data_dir / "images"),
                 "image_size": 32, "batch_size": 8, "valid_images": 6},
        "model": {"encoder": {"channels": [4, 8]},
                  "decoder": {"embedding_dim": 8, "hidden_dim": 12,
                              "attention": {"score": "additive", "hidden_dim": 6}}},
        "train": {"lr": 0.01, "max_steps": 4, "max_epochs": None, "validate_every": 4,
                  "log_every": 2, "tensorboard": False, "threads": 1,
                  "early_stopping": {"metric": "bleu4"}, **train},
        "decode": {"beam": 2, "max_len": 12, "batch_size": 4},
    }
    return load_config(data, RunConfig)
