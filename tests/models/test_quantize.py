"""int8 inference (models/quantize.py): exactly which layers it takes and which it leaves in fp32,
that it leaves the model it was given alone, and that the int8 model decodes close to the fp32
one, for GRU and LSTM decoders, global, local and hard attention, and an LSTMN encoder."""

import pytest
import torch
from torch import nn

from attnlab.decode import beam_search
from attnlab.models import EncoderConfig, ModelConfig, build_model
from attnlab.models.quantize import quantizable_modules, quantize_int8

from .variants import SMALL, translation_model

WIDE = SMALL.times(8)  # wide enough that int8 rounding is small against the values
ATTENTION = "decoder.attention.mechanism"
# model: (the layers int8 takes, the linear layers it must leave in fp32)
EXPECTED = {
    "luong-feed-lstm-additive-local-p": (
        {"encoder.rnn", "decoder.rnn", "decoder.bridge.linear", "decoder.combine",
         "decoder.output.proj", f"{ATTENTION}.position_proj", f"{ATTENTION}.score.query_proj",
         f"{ATTENTION}.score.key_proj"},
        {f"{ATTENTION}.score.v", f"{ATTENTION}.position_v"}),  # v is read, not called
    "bahdanau-cosine": (
        {"encoder.rnn", "decoder.rnn", "decoder.bridge.linear", "decoder.readout",
         "decoder.output.proj"},
        {f"{ATTENTION}.score.strength"}),
    "bahdanau-additive-hard": (
        {"encoder.rnn", "decoder.rnn", "decoder.bridge.linear", "decoder.readout",
         "decoder.output.proj", f"{ATTENTION}.soft.score.query_proj",
         f"{ATTENTION}.soft.score.key_proj"},
        {f"{ATTENTION}.soft.score.v"}),
}
LSTMN_TAKEN = {"decoder.rnn", "decoder.bridge.linear", "decoder.readout", "decoder.output.proj",
               f"{ATTENTION}.score.query_proj", f"{ATTENTION}.score.key_proj"}


def batch():
    generator = torch.Generator().manual_seed(0)
    src = torch.randint(4, 12, (3, 7), generator=generator)
    src_mask = torch.ones_like(src, dtype=torch.bool)
    src_mask[1, 5:] = False
    tgt_in = torch.randint(4, 12, (3, 6), generator=generator)
    return src, src_mask, tgt_in


def lstmn_model():
    config = ModelConfig(encoder=EncoderConfig(kind="lstmn", bidirectional=False,
                                               embedding_dim=32, hidden_dim=32))
    torch.manual_seed(0)
    return build_model(config, 12, 12, max_src_len=12).eval()


def is_int8(module):
    return type(module).__module__.startswith("torch.ao.nn.quantized.dynamic")


def assert_converted_exactly(model, taken):
    """In the int8 copy, the modules named `taken` are int8 and every other linear or
    recurrent layer is the fp32 module it was."""
    quantized = dict(quantize_int8(model).named_modules())
    original = dict(model.named_modules())
    assert {name for name in original if is_int8(quantized[name])} == taken
    for name, module in original.items():
        if isinstance(module, nn.Linear | nn.GRU | nn.LSTM) and name not in taken:
            assert type(quantized[name]) is type(module), name
            assert all(p.dtype == torch.float32 for p in quantized[name].parameters()), name


def assert_close_to_fp32(model):
    src, src_mask, tgt_in = batch()
    with torch.no_grad():
        exact = model.all_positions(src, src_mask, tgt_in).logits
        approx = quantize_int8(model).all_positions(src, src_mask, tgt_in).logits
    assert not torch.equal(exact, approx)  # it really is another computation
    assert (exact - approx).abs().max() < 0.05 * exact.abs().max()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_takes_exactly_the_linear_and_recurrent_layers_it_can(name):
    taken, kept = EXPECTED[name]
    model = translation_model(name, sizes=WIDE).eval()
    assert quantizable_modules(model) == taken
    assert kept <= {n for n, m in model.named_modules() if isinstance(m, nn.Linear)}
    assert_converted_exactly(model, taken)
    assert_close_to_fp32(model)


def test_lstmn_encoder_layers_stay_fp32():
    model = lstmn_model()
    assert quantizable_modules(model) == LSTMN_TAKEN
    assert_converted_exactly(model, LSTMN_TAKEN)
    assert_close_to_fp32(model)


@pytest.mark.parametrize("name", ["bahdanau-additive", "luong-feed-dot", "bahdanau-lstm2-dot",
                                  "luong-feed-concat-local-m", "bahdanau-additive-hard", "none"])
def test_int8_logits_are_close_and_the_original_is_untouched(name):
    model = translation_model(name, sizes=WIDE).eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    assert_close_to_fp32(model)
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key


def test_int8_model_runs_beam_search():
    model = translation_model("luong-feed-general", sizes=WIDE).eval()
    src, src_mask, _ = batch()
    hypotheses = beam_search(quantize_int8(model), src, src_mask, beam_size=3, max_len=8,
                             n_best=2)
    assert [len(h) for h in hypotheses] == [2, 2, 2]
