"""The Bahdanau and Luong decoders against their loop reference (docs/equations.md, "The translation
models"): logits and attention weights, and float64 gradients for every parameter, over GRU/LSTM,
1-2 layers, input feeding on/off, several scores, local-m/local-p and ragged source padding."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from attnlab.attention import as_dense
from attnlab.data import BOS_ID, EOS_ID, PAD_ID
from references.decoders import decoder_loop, gru_cell, lstm_cell

from .variants import FIRST_WORD, Sizes, V, translation_model

# Four different sizes, so that a mixed-up dimension fails; annotations D = 2 * 3 = 6 = the
# decoder state, so `dot` applies.
SIZES = Sizes(source_embedding=4, encoder_hidden=3, target_embedding=5, decoder_hidden=6)

NAMES = [
    "bahdanau-additive", "bahdanau-lstm-additive", "bahdanau-gru2-general", "bahdanau-lstm2-dot",
    "bahdanau-location-tied", "bahdanau-cosine", "bahdanau-additive-local-m",
    "bahdanau-general-local-p", "bahdanau-additive-hard",
    "luong-feed-general", "luong-nofeed-general", "luong-feed-lstm2-dot",
    "luong-nofeed-gru2-additive", "luong-feed-location", "luong-nofeed-lstm-location",
    "luong-feed-scaled-dot-tied", "luong-feed-dot-local-m", "luong-nofeed-general-local-m",
    "luong-feed-lstm-additive-local-p", "luong-nofeed-general-local-p",
]
GRADIENT_NAMES = [
    "bahdanau-additive", "bahdanau-lstm2-dot", "bahdanau-location-tied",
    "bahdanau-general-local-p", "luong-feed-general", "luong-nofeed-gru2-additive",
    "luong-feed-dot-local-m", "luong-feed-lstm-additive-local-p", "luong-feed-scaled-dot-tied",
]

# Ragged source: sentence lengths 5, 2, 4 and 1 in a batch of width 6 (right padding, as the
# packed encoder needs); ragged target: the last two rows end in padding.
SOURCE_LENGTHS, TARGET_LENGTHS = [5, 2, 4, 1], [4, 4, 2, 3]


def make(name, *, seed=0, encoder_layers=1):
    """A float64 model in eval mode (the reference models no dropout)."""
    return translation_model(name, sizes=SIZES, encoder_layers=encoder_layers,
                             seed=seed).double().eval()


def sentences(lengths, width, start, seed):
    """(B, width) ids: random words, each row `start`-prefixed or EOS-ended, PAD after it."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.full((len(lengths), width), PAD_ID)
    for b, n in enumerate(lengths):
        ids[b, :n] = torch.randint(FIRST_WORD, V, (n,), generator=gen)
        if start is None:
            ids[b, n - 1] = EOS_ID
        else:
            ids[b, 0] = start
    return ids


def batch(source_lengths=SOURCE_LENGTHS, target_lengths=TARGET_LENGTHS, seed=0):
    """src (B, S), src_mask (B, S), tgt_in (B, T) = BOS + words, padded."""
    src = sentences(source_lengths, max(source_lengths) + 1, None, seed)
    tgt_in = sentences(target_lengths, max(target_lengths), BOS_ID, seed + 1)
    return src, src != PAD_ID, tgt_in


def both(model, src, src_mask, tgt_in):
    """(fast logits, fast weights), (reference logits, reference weights); each side encodes
    the source itself, so their graphs share nothing but the parameters."""
    out = model.decoder.all_positions(tgt_in, model.encode(src, src_mask))
    reference = decoder_loop(model.decoder, model.encode(src, src_mask), tgt_in)
    weights = None if out.attention is None else as_dense(out.attention)  # local: windows
    return (out.logits, weights), reference


def assert_matches_reference(model, src, src_mask, tgt_in):
    with torch.no_grad():
        (logits, weights), (ref_logits, ref_weights) = both(model, src, src_mask, tgt_in)
    torch.testing.assert_close(weights, ref_weights)
    torch.testing.assert_close(logits, ref_logits)


@pytest.mark.parametrize("name", NAMES)
def test_matches_loop_reference(name):
    assert_matches_reference(make(name), *batch())


@pytest.mark.parametrize("name", ["bahdanau-lstm-additive", "luong-feed-general"])
def test_matches_loop_reference_over_a_deep_encoder(name):
    """h_1(backward) and the summary come from the top encoder layer."""
    assert_matches_reference(make(name, encoder_layers=2), *batch())


def test_hard_attention_argmax_in_eval_mode():
    model = make("bahdanau-additive-hard")
    model.decoder.attention.mechanism.eval_mode = "argmax"
    assert_matches_reference(model, *batch())


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(NAMES), seed=st.integers(0, 2**16),
       source=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
def test_random_lengths_match_reference(name, seed, source, data):
    target = data.draw(st.lists(st.integers(1, 4), min_size=len(source), max_size=len(source)))
    assert_matches_reference(make(name, seed=seed), *batch(source, target, seed))


@pytest.mark.parametrize("name", GRADIENT_NAMES)
def test_gradients_match_loop_reference(name):
    """d(sum logits * P + sum weights * Q) / d(every parameter), fast vs reference."""
    model = make(name)
    src, src_mask, tgt_in = batch()
    (logits, weights), (ref_logits, ref_weights) = both(model, src, src_mask, tgt_in)
    gen = torch.Generator().manual_seed(1)
    probe = torch.randn(logits.shape, generator=gen, dtype=torch.double)
    weights_probe = torch.randn(weights.shape, generator=gen, dtype=torch.double)
    names, params = zip(*model.named_parameters(), strict=True)

    def gradients(logits, weights):
        total = (logits * probe).sum() + (weights * weights_probe).sum()
        return torch.autograd.grad(total, params, allow_unused=True)

    fast, slow = gradients(logits, weights), gradients(ref_logits, ref_weights)
    for param_name, a, b in zip(names, fast, slow, strict=True):
        assert (a is None) == (b is None), param_name
        if a is not None:
            torch.testing.assert_close(a, b, msg=lambda m, n=param_name: f"{n}: {m}")
    decoder_grads = [g for n, g in zip(names, fast, strict=True) if n.startswith("decoder.")]
    assert all(g is not None and g.abs().sum() > 0 for g in decoder_grads)


@pytest.mark.parametrize("kind", [nn.GRU, nn.LSTM])
def test_cells_follow_torch_gate_layout(kind):
    """The reference's hand-written cells against torch's own RNN, two layers, four steps."""
    torch.manual_seed(0)
    rnn = kind(3, 4, num_layers=2, batch_first=True).double()
    xs = torch.randn(1, 4, 3, dtype=torch.double)
    expected, _ = rnn(xs)
    state = [[torch.zeros(4, dtype=torch.double)] * (2 if kind is nn.LSTM else 1)] * 2
    for t in range(4):
        x = xs[0, t]
        for layer in range(2):
            if kind is nn.LSTM:
                state[layer] = list(lstm_cell(rnn, layer, x, *state[layer]))
            else:
                state[layer] = [gru_cell(rnn, layer, x, *state[layer])]
            x = state[layer][0]
        torch.testing.assert_close(x, expected[0, t])
