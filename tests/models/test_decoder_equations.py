"""The Bahdanau and Luong decoders against their loop reference (SPEC.md, "The translation
models"): logits and attention weights, and float64 gradients for every parameter, over GRU/LSTM,
1-2 layers, input feeding on/off, several scores, local-m/local-p and ragged source padding."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from attnlab.data import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig, build_model
from attnlab.models.decoder_reference import decoder_loop, gru_cell, lstm_cell

V = 9  # ids above the specials are words
FIRST_WORD = max(PAD_ID, UNK_ID, BOS_ID, EOS_ID) + 1
ENCODER_HIDDEN, DECODER_HIDDEN = 3, 6  # annotations D = 6 = decoder state: `dot` applies

# name: (decoder kind, attention options, decoder options)
VARIANTS = {
    "bahdanau-gru-additive": ("bahdanau", {"score": "additive"}, {}),
    "bahdanau-lstm-additive": ("bahdanau", {"score": "additive"}, {"rnn": "lstm"}),
    "bahdanau-gru2-general": ("bahdanau", {"score": "general"}, {"layers": 2}),
    "bahdanau-lstm2-dot": ("bahdanau", {"score": "dot"}, {"rnn": "lstm", "layers": 2}),
    "bahdanau-location-tied": ("bahdanau", {"score": "location"}, {"tied_embeddings": True}),
    "bahdanau-cosine": ("bahdanau", {"score": "cosine"}, {}),
    "bahdanau-local-m": ("bahdanau", {"score": "additive", "window": 1}, {}),
    "bahdanau-local-p": ("bahdanau", {"score": "general", "window": 2, "predictive": True}, {}),
    "bahdanau-hard": ("bahdanau", {"score": "additive", "hard": True}, {}),
    "luong-feed-general": ("luong", {"score": "general"}, {}),
    "luong-nofeed-general": ("luong", {"score": "general"}, {"input_feeding": False}),
    "luong-feed-lstm2-dot": ("luong", {"score": "dot"}, {"rnn": "lstm", "layers": 2}),
    "luong-nofeed-gru2-additive": ("luong", {"score": "additive"},
                                   {"input_feeding": False, "layers": 2}),
    "luong-feed-location": ("luong", {"score": "location"}, {}),
    "luong-nofeed-location-lstm": ("luong", {"score": "location"},
                                   {"input_feeding": False, "rnn": "lstm"}),
    "luong-feed-scaled-dot-tied": ("luong", {"score": "scaled_dot"},
                                   {"tied_embeddings": True, "output_dim": 5}),
    "luong-feed-local-m": ("luong", {"score": "dot", "window": 1}, {}),
    "luong-nofeed-local-m": ("luong", {"score": "general", "window": 1},
                             {"input_feeding": False}),
    "luong-feed-local-p-lstm": ("luong", {"score": "additive", "window": 1, "predictive": True},
                                {"rnn": "lstm"}),
    "luong-nofeed-local-p": ("luong", {"score": "general", "window": 2, "predictive": True},
                             {"input_feeding": False}),
}
GRADIENT_VARIANTS = [
    "bahdanau-gru-additive", "bahdanau-lstm2-dot", "bahdanau-location-tied", "bahdanau-local-p",
    "luong-feed-general", "luong-nofeed-gru2-additive", "luong-feed-local-m",
    "luong-feed-local-p-lstm", "luong-feed-scaled-dot-tied",
]

# Ragged source: sentence lengths 5, 2, 4 and 1 in a batch of width 6 (right padding, as the
# packed encoder needs); ragged target: the last two rows end in padding.
SOURCE_LENGTHS, TARGET_LENGTHS = [5, 2, 4, 1], [4, 4, 2, 3]


def make(name, *, seed=0, encoder_layers=1):
    """A float64 model in eval mode (the reference models no dropout)."""
    kind, attention, decoder = VARIANTS[name]
    config = ModelConfig(
        encoder=EncoderConfig(embedding_dim=4, hidden_dim=ENCODER_HIDDEN, layers=encoder_layers,
                              dropout=0.2),
        decoder=DecoderConfig(kind=kind, embedding_dim=5, hidden_dim=DECODER_HIDDEN, dropout=0.2,
                              attention=AttentionConfig(**attention), **decoder),
    )
    torch.manual_seed(seed)
    return build_model(config, V, V, max_src_len=8, pad_id=PAD_ID).double().eval()


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
    out = model.decoder(tgt_in, model.encode(src, src_mask))
    reference = decoder_loop(model.decoder, model.encode(src, src_mask), tgt_in)
    return (out.logits, out.attention), reference


def assert_matches_reference(model, src, src_mask, tgt_in):
    with torch.no_grad():
        (logits, weights), (ref_logits, ref_weights) = both(model, src, src_mask, tgt_in)
    torch.testing.assert_close(weights, ref_weights)
    torch.testing.assert_close(logits, ref_logits)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_matches_loop_reference(name):
    assert_matches_reference(make(name), *batch())


@pytest.mark.parametrize("name", ["bahdanau-lstm-additive", "luong-feed-general"])
def test_matches_loop_reference_over_a_deep_encoder(name):
    """h_1(backward) and the summary come from the top encoder layer."""
    assert_matches_reference(make(name, encoder_layers=2), *batch())


def test_hard_attention_argmax_in_eval_mode():
    model = make("bahdanau-hard")
    model.decoder.attention.mechanism.eval_mode = "argmax"
    assert_matches_reference(model, *batch())


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(sorted(VARIANTS)), seed=st.integers(0, 2**16),
       source=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
def test_random_lengths_match_reference(name, seed, source, data):
    target = data.draw(st.lists(st.integers(1, 4), min_size=len(source), max_size=len(source)))
    assert_matches_reference(make(name, seed=seed), *batch(source, target, seed))


@pytest.mark.parametrize("name", GRADIENT_VARIANTS)
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
