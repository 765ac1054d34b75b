"""int8 inference (models/quantize.py): which layers it takes, that it leaves the model it was
given alone, and that the int8 model decodes close to the fp32 one, for GRU and LSTM decoders,
global, local and hard attention, and an LSTMN encoder."""

import pytest
import torch
from torch import nn

from attnlab.decode import beam_search
from attnlab.models import EncoderConfig, ModelConfig, build_model
from attnlab.models.quantize import quantizable_modules, quantize_int8

from .variants import SMALL, translation_model

WIDE = SMALL.times(8)  # wide enough that int8 rounding is small against the values


def batch():
    generator = torch.Generator().manual_seed(0)
    src = torch.randint(4, 12, (3, 7), generator=generator)
    src_mask = torch.ones_like(src, dtype=torch.bool)
    src_mask[1, 5:] = False
    tgt_in = torch.randint(4, 12, (3, 6), generator=generator)
    return src, src_mask, tgt_in


@pytest.mark.parametrize("name", ["bahdanau-additive", "luong-feed-dot", "bahdanau-lstm2-dot",
                                  "luong-feed-concat-local-m", "bahdanau-additive-hard", "none"])
def test_int8_logits_are_close_and_the_original_is_untouched(name):
    model = translation_model(name, sizes=WIDE).eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    quantized = quantize_int8(model)
    src, src_mask, tgt_in = batch()
    with torch.no_grad():
        exact = model(src, src_mask, tgt_in).logits
        approx = quantized(src, src_mask, tgt_in).logits
    assert not torch.equal(exact, approx)  # it really is another computation
    assert (exact - approx).abs().max() < 0.05 * exact.abs().max()
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key
    assert all(isinstance(m, nn.Linear | nn.GRU | nn.LSTM)
               for name, m in model.named_modules() if name in quantizable_modules(model))


def test_int8_model_runs_beam_search():
    model = translation_model("luong-feed-general", sizes=WIDE).eval()
    src, src_mask, _ = batch()
    hypotheses = beam_search(quantize_int8(model), src, src_mask, beam_size=3, max_len=8,
                             n_best=2)
    assert [len(h) for h in hypotheses] == [2, 2, 2]


def test_what_is_taken_and_what_is_left():
    model = translation_model("bahdanau-additive", sizes=WIDE)
    taken = quantizable_modules(model)
    assert {"encoder.rnn", "decoder.rnn"} <= taken
    assert not any(name.endswith(".v") for name in taken)  # the score vector v is read directly


def test_lstmn_encoder_layers_stay_fp32():
    config = ModelConfig(encoder=EncoderConfig(kind="lstmn", bidirectional=False,
                                               embedding_dim=8, hidden_dim=8))
    model = build_model(config, 12, 12, max_src_len=12).eval()
    assert not any(name.startswith("encoder.lstmn") for name in quantizable_modules(model))
    src, src_mask, tgt_in = batch()
    with torch.no_grad():
        assert quantize_int8(model)(src, src_mask, tgt_in).logits.shape == (3, 6, 12)
