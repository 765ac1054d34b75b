"""Image encoders: a CNN feature map of h x w locations -> L = h*w annotation vectors a_i.

Xu et al. 2015 (sec. 3.1.1) take VGG's conv5_4 (14 x 14 x 512). Here the default is a small
conv net trained from scratch (it fits a CPU budget and the shapes task); a torchvision ResNet
with weights from a local file is the option for natural images. torchvision is optional and
never downloads anything at run time.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

import torch
from torch import Tensor, nn

from attnlab.errors import ConfigError

RESNET_CHANNELS = {  # output channels of stage 3 and stage 4
    "resnet18": (256, 512), "resnet34": (256, 512), "resnet50": (1024, 2048),
    "resnet101": (1024, 2048), "resnet152": (1024, 2048),
}


def halve(length: int, times: int) -> int:
    """A side after `times` stride-2 layers with kernel 3 (or 1, 7) and 'same' padding."""
    for _ in range(times):
        length = (length - 1) // 2 + 1
    return length


def flatten_locations(features: Tensor, positions: bool) -> Tensor:
    """features (B, D, h, w) -> annotations (B, h*w, D [+ 2]), row by row (index = y*w + x).

    With `positions`, each location's x and y in [-1, 1] are appended as two more channels.
    """
    batch, _, height, width = features.shape
    if positions:
        ys = torch.linspace(-1, 1, height, device=features.device, dtype=features.dtype)
        xs = torch.linspace(-1, 1, width, device=features.device, dtype=features.dtype)
        grid = torch.stack(torch.meshgrid(xs, ys, indexing="xy"))  # (2, h, w): x, then y
        features = torch.cat([features, grid.expand(batch, -1, -1, -1)], 1)
    return features.flatten(2).transpose(1, 2)  # (B, h*w, D')


class ConvEncoder(nn.Module):
    """Stages of [3x3 conv stride 2, BN, ReLU, 3x3 conv, BN, ReLU]; each halves the grid.

    Batch norm trains this net several times faster than group norm or none on shapes; its
    running statistics must be refreshed before evaluation (`refresh_batch_norm`).

    forward(images (B, 3, H, W)) -> annotations (B, L, output_dim).
    """

    def __init__(self, channels: list[int], *, positions: bool = True):
        super().__init__()
        if not channels or min(channels) < 1:
            raise ConfigError(f"model.encoder.channels needs positive sizes, got {channels}")
        layers: list[nn.Module] = []
        previous = 3
        for size in channels:
            for stride in (2, 1):  # downsample first: the 3x3 conv then runs on 1/4 the pixels
                layers += [nn.Conv2d(previous, size, 3, stride=stride, padding=1, bias=False),
                           nn.BatchNorm2d(size), nn.ReLU(inplace=True)]
                previous = size
        self.body = nn.Sequential(*layers)
        self.stages, self.positions = len(channels), positions
        self.output_dim = channels[-1] + 2 * positions

    def grid_size(self, height: int, width: int) -> tuple[int, int]:
        """(h, w) of the feature map for H x W images."""
        return halve(height, self.stages), halve(width, self.stages)

    def forward(self, images: Tensor) -> Tensor:
        return flatten_locations(self.body(images), self.positions)


class ResNetEncoder(nn.Module):
    """A torchvision ResNet cut after stage 3 or 4, its weights read from a local file.

    forward(images (B, 3, H, W)) -> annotations (B, L, output_dim). Without fine_tune the
    network is frozen and its batch-norm layers stay in eval mode (ImageNet statistics).
    """

    def __init__(self, name: str, weights: str | None, *, stages: int = 4,
                 fine_tune: bool = False, positions: bool = False):
        super().__init__()
        models = _torchvision_models()
        if weights is None or not Path(weights).is_file():
            raise ConfigError(f"model.encoder.weights must name a local {name} state_dict file "
                              f"(got {weights!r}); attnlab never downloads weights")
        network = getattr(models, name)(weights=None)
        try:
            network.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        except Exception as error:  # a pickled model, another architecture, a damaged file
            raise ConfigError(f"cannot load {name} weights from {weights}: {error}") from None
        layers = [network.conv1, network.bn1, network.relu, network.maxpool, network.layer1,
                  network.layer2, network.layer3] + ([network.layer4] if stages == 4 else [])
        self.body = nn.Sequential(*layers)
        self.fine_tune, self.positions, self.stages = fine_tune, positions, stages
        self.output_dim = RESNET_CHANNELS[name][stages - 3] + 2 * positions
        if not fine_tune:
            self.body.requires_grad_(False)

    def train(self, mode: bool = True) -> ResNetEncoder:
        super().train(mode)
        if not self.fine_tune:
            self.body.eval()  # fixed features must not drift with the caption batches
        return self

    def grid_size(self, height: int, width: int) -> tuple[int, int]:
        # conv1 and maxpool halve, then every stage after the first
        return halve(height, self.stages + 1), halve(width, self.stages + 1)

    def forward(self, images: Tensor) -> Tensor:
        return flatten_locations(self.body(images), self.positions)


ImageEncoder = ConvEncoder | ResNetEncoder  # what a Captioner reads images with


@torch.no_grad()
def refresh_batch_norm(encoder: nn.Module, batches: Iterable[Tensor]) -> None:
    """Re-estimate the running statistics of the trainable batch-norm layers as plain averages
    over these image batches (B, 3, H, W), with the current weights ("precise BN", Wu & Johnson
    2021). The moving average kept in training lags behind fast-moving weights: on shapes it
    gave a validation loss of 3.5 where the current statistics give 0.11."""
    norms = [m for m in encoder.modules()
             if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.weight.requires_grad]
    if not norms:
        return
    modes = [(m, m.training, m.momentum) for m in norms]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a cumulative average over the batches
        norm.train()
    for images in batches:
        encoder(images)
    for norm, training, momentum in modes:
        norm.train(training)
        norm.momentum = momentum


def _torchvision_models() -> ModuleType:
    try:
        import torchvision.models
    except ImportError:
        raise ConfigError("model.encoder.kind=resnet needs torchvision, which is not "
                          "installed (pip install torchvision); or use kind: cnn") from None
    models: ModuleType = torchvision.models
    return models
