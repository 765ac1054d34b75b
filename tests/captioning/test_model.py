"""The Show, Attend and Tell captioner: penalty, REINFORCE gradients, step = teacher forcing."""

import pytest
import torch

from attnlab.attention import SCORES
from attnlab.config import load_config
from attnlab.configs import config_path
from attnlab.errors import ConfigError
from attnlab.models import (
    CaptionDecoderConfig,
    CaptionOutput,
    ConvEncoder,
    ImageEncoderConfig,
    build_captioner,
    build_image_encoder,
    doubly_stochastic_penalty,
    refresh_batch_norm,
    set_hard_decoding,
)

from .tiny import tiny_batch, tiny_model, tiny_model_config


def test_doubly_stochastic_penalty_matches_its_formula():
    alpha = torch.tensor([[[0.7, 0.3, 0.0], [0.4, 0.5, 0.1], [0.2, 0.2, 0.6]],
                          [[0.1, 0.1, 0.8], [0.3, 0.3, 0.4], [0.0, 1.0, 0.0]]])  # (2, 3, 3)
    mask = torch.tensor([[True, True, False], [True, True, True]])
    # caption 0, real steps 0-1: sum_t alpha = (1.1, 0.8, 0.1)
    first = (1 - 1.1) ** 2 + (1 - 0.8) ** 2 + (1 - 0.1) ** 2
    # caption 1, all steps: (0.4, 1.4, 1.2)
    second = (1 - 0.4) ** 2 + (1 - 1.4) ** 2 + (1 - 1.2) ** 2
    torch.testing.assert_close(doubly_stochastic_penalty(alpha, mask),
                               torch.tensor([first, second]))


def test_soft_loss_adds_lambda_times_the_penalty_per_caption():
    model = tiny_model(doubly_stochastic=0.5)
    alpha = torch.softmax(torch.randn(2, 3, 64), -1)
    logits = torch.randn(2, 3, 9)
    tgt_out = torch.tensor([[4, 5, 3], [6, 3, 0]])
    mask = tgt_out != 0
    loss = model.loss(CaptionOutput(logits, alpha), tgt_out, mask)
    nll = torch.nn.functional.cross_entropy(logits[mask], tgt_out[mask], reduction="sum")
    penalty = doubly_stochastic_penalty(alpha, mask)
    expected = (nll / 2 + 0.5 * penalty.mean()) * 2 / 5  # per caption, then per token
    torch.testing.assert_close(loss.loss, expected)
    assert loss.tokens == 5 and loss.nll_sum == pytest.approx(float(nll))


def attention_gradients(model):
    """The gradients of the attention score's parameters after one training loss."""
    images, tgt_in, tgt_out, mask = tiny_batch()
    model.train()
    torch.manual_seed(3)  # the samples
    out = model(images, tgt_in)
    model.loss(out, tgt_out, mask).loss.backward()
    return [p.grad for p in model.decoder.attention.parameters()]


def test_hard_attention_learns_only_through_reinforce():
    off = tiny_model(mechanism="hard", doubly_stochastic=0.0, lambda_r=0.0, lambda_e=0.0,
                     expectation_prob=0.0)
    grads = attention_gradients(off)
    assert grads and all(g is None or torch.count_nonzero(g) == 0 for g in grads)
    # the rest of the model does learn from the sampled contexts
    assert torch.count_nonzero(off.decoder.cell.weight_ih.grad) > 0
    assert torch.count_nonzero(off.encoder.body[0].weight.grad) > 0
    on = tiny_model(mechanism="hard", doubly_stochastic=0.0, lambda_r=1.0, lambda_e=0.0,
                    expectation_prob=0.0)
    assert all(g is not None and torch.count_nonzero(g) > 0 for g in attention_gradients(on))


def test_hard_attention_samples_in_training_and_is_deterministic_in_eval():
    model = tiny_model(mechanism="hard", doubly_stochastic=0.0, expectation_prob=0.0)
    images, tgt_in, _, _ = tiny_batch()
    model.train()
    out = model(images, tgt_in)
    assert out.hard_log_prob.shape == tgt_in.shape and (out.hard_log_prob <= 0).all()
    model.eval()
    with torch.no_grad():
        torch.testing.assert_close(model(images, tgt_in).logits, model(images, tgt_in).logits)


@pytest.mark.parametrize("mechanism", ["global", "hard"])
def test_step_by_step_equals_teacher_forcing(mechanism):
    model = tiny_model(mechanism=mechanism, doubly_stochastic=0.0).eval()
    images, tgt_in, _, _ = tiny_batch()
    with torch.no_grad():
        out = model(images, tgt_in)
        state = model.decoder.start(model.encode(images))
        for t in range(tgt_in.shape[1]):
            logits, alpha, state = model.decoder.step(tgt_in[:, t], state)
            torch.testing.assert_close(logits, out.logits[:, t])
            torch.testing.assert_close(alpha, out.attention[:, t])


@pytest.mark.parametrize("score", sorted(SCORES))
def test_every_score_plugs_in(score):
    # dot, scaled_dot and cosine compare h_{t-1} with a_i directly: make them the same size
    config = tiny_model_config(score=score)
    config.decoder.hidden_dim = 10  # = 8 channels + (x, y)
    model = build_captioner(config, 9, 32)
    images, tgt_in, _, _ = tiny_batch()
    out = model(images, tgt_in)
    assert out.logits.shape == (4, 5, 9) and out.attention.shape == (4, 5, 64)
    torch.testing.assert_close(out.attention.sum(-1), torch.ones(4, 5))


@pytest.mark.parametrize("size", [32, 50, 64])
def test_encoder_grid_size_is_its_output(size):
    encoder = ConvEncoder([4, 4, 4], positions=True)
    height, width = encoder.grid_size(size, size + 6)
    annotations = encoder(torch.zeros(1, 3, size, size + 6))
    assert annotations.shape == (1, height * width, 6)
    # the appended positions run from -1 to 1, x along a row, y down the columns
    grid = annotations[0, :, -2:].view(height, width, 2)
    assert grid[0, 0].tolist() == [-1.0, -1.0] and grid[-1, -1].tolist() == [1.0, 1.0]


def test_resnet_needs_torchvision_and_local_weights(tmp_path):
    config = ImageEncoderConfig(kind="resnet", weights=str(tmp_path / "missing.pth"))
    with pytest.raises(ConfigError, match="torchvision|local"):
        build_image_encoder(config)


def test_hard_attention_refuses_the_soft_penalty():
    with pytest.raises(ConfigError, match="doubly_stochastic"):
        load_config({"attention": {"mechanism": "hard", "doubly_stochastic": 1.0}},
                    CaptionDecoderConfig)


@pytest.mark.parametrize("name", ["shapes-soft", "shapes-hard", "flickr8k-soft"])
def test_shipped_configs_load_and_build(name):
    from attnlab.captioning.config import RunConfig

    config = load_config(config_path(name), RunConfig)
    size = config.data.image_size
    model = build_captioner(config.model, 30, size)
    out = model(torch.randn(2, 3, size, size), torch.randint(4, 30, (2, 3)))
    assert out.logits.shape == (2, 3, 30)
    assert config.model.decoder.attention.hard == name.endswith("hard")


def test_argmax_decoding_reads_only_the_most_likely_location():
    model = tiny_model(mechanism="hard", doubly_stochastic=0.0).eval()
    set_hard_decoding(model, "argmax")
    images, _, _, _ = tiny_batch()
    with torch.no_grad():
        state = model.decoder.start(model.encode(images))
        attended = model.decoder.attention(state.rnn[0][0], state.memory)
    chosen = attended.weights.argmax(-1)  # (B,)
    torch.testing.assert_close(attended.context, state.memory.keys[torch.arange(4), chosen])


def conv(inputs, outputs, stride):
    return torch.nn.Conv2d(inputs, outputs, 1, stride=stride)


class FakeResNet(torch.nn.Module):
    """torchvision's ResNet layout (conv1 ... layer4) with 1x1 convs of resnet18's widths."""

    def __init__(self, weights=None):
        super().__init__()
        self.conv1, self.bn1 = conv(3, 64, 2), torch.nn.BatchNorm2d(64)
        self.relu, self.maxpool = torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1)
        self.layer1, self.layer2 = conv(64, 64, 1), conv(64, 128, 2)
        self.layer3, self.layer4 = conv(128, 256, 2), conv(256, 512, 2)


def test_resnet_encoder_loads_local_weights_and_stays_frozen(tmp_path, monkeypatch):
    import sys
    import types

    fake = types.ModuleType("torchvision")
    fake.models = types.SimpleNamespace(resnet18=FakeResNet)
    monkeypatch.setitem(sys.modules, "torchvision", fake)
    monkeypatch.setitem(sys.modules, "torchvision.models", fake.models)
    torch.manual_seed(0)
    weights = FakeResNet().state_dict()
    torch.save(weights, tmp_path / "r18.pth")
    config = ImageEncoderConfig(kind="resnet", resnet="resnet18", weights=str(tmp_path / "r18.pth"),
                           resnet_stages=3, positions=False)
    encoder = build_image_encoder(config).train()
    torch.testing.assert_close(encoder.body[0].weight, weights["conv1.weight"])
    assert not any(p.requires_grad for p in encoder.parameters())
    assert not encoder.body[1].training  # batch norm keeps the ImageNet statistics
    annotations = encoder(torch.randn(2, 3, 64, 64))
    assert annotations.shape == (2, 4 * 4, 256) and encoder.grid_size(64, 64) == (4, 4)


def test_refreshed_batch_norm_holds_the_average_of_the_batch_statistics():
    torch.manual_seed(0)
    encoder = ConvEncoder([4], positions=False).eval()
    batches = [torch.randn(3, 3, 8, 8) + shift for shift in (0.0, 2.0)]
    refresh_batch_norm(encoder, batches)
    conv, norm = encoder.body[0], encoder.body[1]
    with torch.no_grad():
        means = torch.stack([conv(b).mean((0, 2, 3)) for b in batches]).mean(0)
    torch.testing.assert_close(norm.running_mean, means)
    assert not norm.training and norm.momentum == 0.1  # modes restored
    frozen = ConvEncoder([4], positions=False).requires_grad_(False)
    refresh_batch_norm(frozen, batches)
    assert torch.count_nonzero(frozen.body[1].running_mean) == 0  # fixed layers are left alone
