"""The Transformer against its loop reference (Vaswani et al. 2017, tests/references/
transformer.py) in float64: logits and every layer's and head's cross-attention; and its
properties: padding cannot change a real position, a later target token cannot change an
earlier step, step-by-step decoding equals teacher forcing, reordering follows the caches,
the attention block's gradients, and the config's checks. (Search on it: tests/decode, whose
NAMES hold "transformer".)"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.data import BOS_ID, PAD_ID
from attnlab.decode import beam_search, greedy_search
from attnlab.models import (
    AttentionConfig,
    DecoderConfig,
    EncoderConfig,
    ModelConfig,
    MultiHeadAttention,
    build_model,
)
from references.transformer import transformer_loop

from .variants import FIRST_WORD, V

WIDTH = 8


def make(*, layers=2, heads=2, tied=False, positions=None, seed=0, encoder="transformer",
         decoder="transformer"):
    """A float64 model in eval mode (the reference models no dropout); d_model 8."""
    transformer = dict(heads=heads, positions=positions or "sinusoidal")
    enc = (EncoderConfig(kind="transformer", embedding_dim=WIDTH, hidden_dim=WIDTH,
                         layers=layers, ff_dim=12, dropout=0.3, **transformer)
           if encoder == "transformer" else EncoderConfig(embedding_dim=5, hidden_dim=3))
    dec = (DecoderConfig(kind="transformer", embedding_dim=WIDTH, hidden_dim=WIDTH,
                         layers=layers, ff_dim=12, dropout=0.3, tied_embeddings=tied,
                         attention=AttentionConfig(score="scaled_dot"), **transformer)
           if decoder == "transformer" else DecoderConfig(kind=decoder, embedding_dim=5,
                                                          hidden_dim=WIDTH))
    torch.manual_seed(seed)
    model = build_model(ModelConfig(enc, dec), V, V + 1, max_src_len=12, pad_id=PAD_ID)
    return model.double().eval()


def batch(source_lengths, target_length, seed):
    """Random words: src (B, S) right-padded with its mask, tgt_in (B, T) starting with BOS."""
    gen = torch.Generator().manual_seed(seed)
    width = max(source_lengths)
    src = torch.randint(FIRST_WORD, V, (len(source_lengths), width), generator=gen)
    mask = torch.arange(width).unsqueeze(0) < torch.tensor(source_lengths).unsqueeze(1)
    tgt_in = torch.randint(FIRST_WORD, V + 1, (len(source_lengths), target_length), generator=gen)
    tgt_in[:, 0] = BOS_ID
    return src.masked_fill(~mask, PAD_ID), mask, tgt_in


lengths = st.lists(st.integers(1, 5), min_size=1, max_size=3)


@settings(max_examples=12)
@given(source_lengths=lengths, target_length=st.integers(1, 4), layers=st.integers(1, 2),
       heads=st.sampled_from([1, 2, 4]), tied=st.booleans(),
       positions=st.sampled_from([None, "learned"]), seed=st.integers(0, 3))
def test_matches_the_loop_reference(source_lengths, target_length, layers, heads, tied,
                                    positions, seed):
    model = make(layers=layers, heads=heads, tied=tied, positions=positions, seed=seed)
    if positions == "learned":  # random rows, not the zeros-free init alone
        torch.nn.init.normal_(model.encoder.positions.table.weight)
    src, mask, tgt_in = batch(source_lengths, target_length, seed)
    with torch.no_grad():
        out = model.all_positions(src, mask, tgt_in)
        logits, weights = transformer_loop(model, src, mask, tgt_in)
    torch.testing.assert_close(out.logits, logits, rtol=1e-10, atol=1e-10)
    assert out.heads.shape == (len(source_lengths), layers, heads, target_length, src.shape[1])
    for row, expected in enumerate(weights):
        real = source_lengths[row]
        torch.testing.assert_close(out.heads[row, ..., :real], expected, rtol=1e-10, atol=1e-10)
        assert not out.heads[row, ..., real:].any()  # padding gets exactly 0
    # the (T, S) attention the rest of attnlab reads: the last layer's mean over heads
    torch.testing.assert_close(out.attention, out.heads[:, -1].mean(1))
    torch.testing.assert_close(out.attention.sum(-1), torch.ones_like(out.attention[..., 0]))


@settings(max_examples=8)
@given(source_lengths=lengths, extra=st.integers(1, 3), seed=st.integers(0, 5))
def test_padding_cannot_change_a_real_position(source_lengths, extra, seed):
    model = make(seed=seed)
    src, mask, tgt_in = batch(source_lengths, 3, seed)
    wider = torch.cat([src, torch.randint(FIRST_WORD, V, (src.shape[0], extra))], 1)
    wider_mask = torch.cat([mask, torch.zeros(src.shape[0], extra, dtype=torch.bool)], 1)
    with torch.no_grad():
        out = model.all_positions(src, mask, tgt_in)
        padded = model.all_positions(wider, wider_mask, tgt_in)  # words where padding is
    torch.testing.assert_close(padded.logits, out.logits, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(padded.heads[..., : src.shape[1]], out.heads, rtol=0, atol=1e-12)


@settings(max_examples=8)
@given(position=st.integers(1, 4), seed=st.integers(0, 5))
def test_a_later_target_token_cannot_change_an_earlier_step(position, seed):
    model = make(seed=seed)
    src, mask, tgt_in = batch([4, 2], 5, seed)
    changed = tgt_in.clone()
    changed[:, position:] = torch.randint(FIRST_WORD, V + 1, changed[:, position:].shape)
    with torch.no_grad():
        out, other = model.all_positions(src, mask, tgt_in), model.all_positions(src, mask, changed)
    torch.testing.assert_close(other.logits[:, :position], out.logits[:, :position], rtol=0,
                               atol=1e-12)
    torch.testing.assert_close(other.heads[..., :position, :], out.heads[..., :position, :],
                               rtol=0, atol=1e-12)


def test_step_by_step_and_in_blocks_equal_teacher_forcing():
    model = make(layers=2, heads=2)
    src, mask, tgt_in = batch([5, 2, 3], 5, seed=1)
    with torch.no_grad():
        out = model.all_positions(src, mask, tgt_in)
        state, logits, weights = model.start(src, mask), [], []
        for t in range(tgt_in.shape[1]):
            step_logits, step_weights, state = model.step(tgt_in[:, t], state)
            logits.append(step_logits)
            weights.append(step_weights)
        assert state.step == 5 and state.rnn[0].shape == (1, 3, 2, 5, WIDTH // 2)
        decoder, encoded = model.decoder, model.encode(src, mask)
        embedded = decoder.embedding(tgt_in)
        first, _, half = decoder.run(embedded[:, :2], decoder.start(encoded))
        rest, attention, _ = decoder.run(embedded[:, 2:], half)
    torch.testing.assert_close(torch.stack(logits, 1), out.logits, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(torch.stack(weights, 1), out.attention, rtol=1e-12, atol=1e-12)
    features, _ = decoder.forced_heads(tgt_in, encoded)
    torch.testing.assert_close(torch.cat([first, rest], 1), features, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(attention.weights, out.attention[:, 2:], rtol=1e-12, atol=1e-12)


def test_forward_gives_the_real_positions_of_all_positions():
    model = make()
    src, mask, tgt_in = batch([3, 4], 4, seed=2)
    tgt_mask = torch.tensor([[True] * 4, [True, True, False, False]])
    with torch.no_grad():
        out, every = model(src, mask, tgt_in, tgt_mask), model.all_positions(src, mask, tgt_in)
    torch.testing.assert_close(out.logits, every.logits[tgt_mask])
    torch.testing.assert_close(out.heads, every.heads)


def test_reorder_follows_the_caches_and_the_memory():
    """Reordered mid-sentence, the state continues as the reordered batch would from the start;
    beams of one sentence (equal memory rows) may reorder their caches alone."""
    model = make()
    src, mask, tgt_in = batch([5, 2, 3], 4, seed=3)
    index = torch.tensor([2, 0, 0, 1])
    with torch.no_grad():
        state = model.start(src, mask)
        for t in range(2):
            _, _, state = model.step(tgt_in[:, t], state)
        state = state.reorder(index, memory=True)
        found = [model.step(tgt_in[index, t], state)[0] for t in (2,)]
        expected = model.all_positions(src[index], mask[index], tgt_in[index]).logits[:, 2]
        torch.testing.assert_close(found[0], expected, rtol=1e-12, atol=1e-12)
        # beams: two copies of sentence 0, the second following a different prefix
        beams = model.start(src[[0, 0]], mask[[0, 0]])
        prefixes = torch.stack([tgt_in[0], tgt_in[1]])  # rows differ from step 1
        for t in range(2):
            _, _, beams = model.step(prefixes[:, t], beams)
        swapped = beams.reorder(torch.tensor([1, 1]))  # the memory is left as it is
        logits, _, _ = model.step(prefixes[[1, 1], 2], swapped)
        alone = model.all_positions(src[[0]], mask[[0]], prefixes[[1], :3]).logits[0, 2]
    torch.testing.assert_close(logits, alone.expand(2, -1), rtol=1e-12, atol=1e-12)


def test_context_weight_gives_what_agreeing_heads_add():
    """With every head's weights equal to their mean a, the last cross-attention adds
    sum_j a_tj W_O W_V h_j (+ biases): the norm-based reading's W."""
    model = make(encoder="rnn")  # keys of width 6, not d_model
    attention = model.decoder.layers[-1].cross_attention
    keys = torch.randn(1, 4, 6, dtype=torch.float64)
    weight = model.decoder.context_weight()
    assert weight.shape == (WIDTH, 6)
    with torch.no_grad():
        memory = attention.project(keys)
        values = memory.values.transpose(1, 2).reshape(1, 4, WIDTH)  # every head's W_V h_j + b
        added = attention.output_proj(values)  # (1, S, D): what weight 1 on j would add
    torch.testing.assert_close(added - attention.output_proj(attention.value_proj.bias),
                               keys @ weight.T)


def test_multi_head_attention_gradients():
    torch.manual_seed(0)
    attention = MultiHeadAttention(4, 2, key_dim=3).double()
    query = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    keys = torch.randn(2, 5, 3, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False]]).unsqueeze(1)

    def run(query, keys, *weights):
        output, attended = attention(query, attention.project(keys), mask)
        return output, attended

    assert torch.autograd.gradcheck(run, (query, keys))
    params = [p.requires_grad_(True) for p in attention.parameters()]
    assert torch.autograd.gradcheck(lambda *p: attention(query, attention.project(keys),
                                                         mask)[0], tuple(params))


def test_greedy_and_beam_search_run_and_agree_with_teacher_forcing():
    model = make()
    src, mask, _ = batch([5, 1, 3], 1, seed=4)
    greedy = greedy_search(model, src, mask, max_len=6)
    beam = beam_search(model, src, mask, beam_size=1, max_len=6)
    assert [h.tokens for h in greedy] == [hyps[0].tokens for hyps in beam]
    found = beam_search(model, src, mask, beam_size=3, max_len=6, n_best=3)
    for row, hypotheses in enumerate(found):
        real = int(mask[row].sum())
        for hypothesis in hypotheses:
            tokens = torch.tensor([hypothesis.tokens])
            tgt_in = torch.cat([torch.tensor([[BOS_ID]]), tokens[:, :-1]], 1)
            with torch.no_grad():
                out = model.all_positions(src[row : row + 1, :real], mask[row : row + 1, :real],
                                          tgt_in)
            torch.testing.assert_close(hypothesis.attention, out.attention[0])
            log_prob = torch.log_softmax(out.logits[0], -1).gather(1, tokens.t()).sum()
            assert hypothesis.log_prob == pytest.approx(float(log_prob), abs=1e-10)


@pytest.mark.parametrize("encoder, decoder", [("rnn", "transformer"), ("transformer", "luong"),
                                              ("transformer", "bahdanau")])
def test_a_transformer_side_joins_a_recurrent_one(encoder, decoder):
    model = make(encoder=encoder, decoder=decoder)
    src, mask, tgt_in = batch([4, 2], 3, seed=5)
    with torch.no_grad():
        out = model.all_positions(src, mask, tgt_in)
        state, logits = model.start(src, mask), []
        for t in range(3):
            step_logits, _, state = model.step(tgt_in[:, t], state)
            logits.append(step_logits)
    torch.testing.assert_close(torch.stack(logits, 1), out.logits, rtol=1e-10, atol=1e-10)


def test_training_reduces_the_loss():
    model = make().train()
    src, mask, tgt_in = batch([4, 3, 5], 4, seed=6)
    tgt_out = torch.roll(tgt_in, -1, 1)
    tgt_mask = torch.ones_like(tgt_in, dtype=torch.bool)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        result = model.loss(model(src, mask, tgt_in, tgt_mask), tgt_out, tgt_mask, 0.1)
        optimiser.zero_grad()
        result.loss.backward()
        optimiser.step()
        losses.append(float(result.loss.detach()))
    assert losses[-1] < 0.7 * losses[0]  # dropout 0.3 and smoothing 0.1 keep it above 0


@pytest.mark.parametrize("section, options, message", [
    ("decoder", {"kind": "transformer", "attention": AttentionConfig(score="scaled_dot")},
     "needs heads"),
    ("decoder", {"kind": "transformer", "heads": 3, "embedding_dim": 8, "hidden_dim": 8,
                 "attention": AttentionConfig(score="scaled_dot")}, "multiple of heads"),
    ("decoder", {"kind": "transformer", "heads": 2, "embedding_dim": 6, "hidden_dim": 8,
                 "attention": AttentionConfig(score="scaled_dot")}, "embedding_dim must equal"),
    ("decoder", {"kind": "transformer", "heads": 2, "embedding_dim": 8, "hidden_dim": 8},
     "scaled_dot score"),
    ("decoder", {"kind": "bahdanau", "heads": 2}, "belong to kind transformer"),
    ("encoder", {"kind": "lstmn", "ff_dim": 16}, "belong to kind transformer"),
    ("encoder", {"kind": "transformer", "embedding_dim": 8, "hidden_dim": 8}, "needs heads"),
])
def test_config_mistakes_are_one_clear_sentence(section, options, message):
    cls = DecoderConfig if section == "decoder" else EncoderConfig
    with pytest.raises(ValueError, match=message):
        cls(**options)
