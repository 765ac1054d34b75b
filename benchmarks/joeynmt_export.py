"""Hand attnlab's reference model to JoeyNMT 2.3, so the peer decodes the very same weights.

The model is `common.reference_model("luong", ...)`: a bidirectional RNN encoder, a one-layer GRU
`luong` decoder (update, then attend) with the additive score, with or without input feeding,
untied output layer. That is JoeyNMT's RecurrentEncoder + RecurrentDecoder with its "bahdanau"
attention, parameter for parameter (attnlab name -> JoeyNMT state_dict key):

    encoder.embedding.weight            -> src_embed.lut.weight           rows in JoeyNMT id order
    encoder.rnn.* (nn.GRU, both ways)   -> encoder.rnn.*                  as is (same nn.GRU)
    decoder.embedding.weight            -> trg_embed.lut.weight           rows in JoeyNMT id order
    decoder.rnn.* (input [E y; h~])     -> decoder.rnn.*                  as is (same input order)
    decoder.bridge.linear.{weight,bias} -> decoder.bridge_layer.*         tanh(W [h_fwd_last;
                                                                          h_bwd_first] + b), both
    attention score.query_proj.weight   -> decoder.attention.query_layer.weight     W_a
    attention score.key_proj.weight     -> decoder.attention.key_layer.weight       U_a
    attention score.v.weight            -> decoder.attention.energy_layer.weight    v_a
    decoder.combine.weight, on [c; h]   -> decoder.att_vector_layer.weight, on [h; c]: the two
                                           column blocks swapped; its bias set to 0 (W_c has none)
    decoder.output.proj.weight          -> decoder.output_layer.weight    rows in JoeyNMT id order
    decoder.output.proj.bias            -> NOTHING: JoeyNMT's output layer is
                                           nn.Linear(hidden, vocab, bias=False)

The output bias is the one part JoeyNMT cannot hold: its logits are W h~, attnlab's W h~ + b.
`export_to_joeynmt` refuses a model with a non-zero bias unless `drop_output_bias=True`, and then
JoeyNMT decodes attnlab's model without b (every other weight identical).

Vocabulary: JoeyNMT numbers <unk> <pad> <s> </s> as 0 1 2 3 and then the voc_file lines; attnlab
numbers <pad> <unk> <s> </s> as 0 1 2 3 and then the sentencepiece pieces. The voc_file lists the
pieces in JoeyNMT id order and every embedding/output row moves with its piece. JoeyNMT tokenises
with attnlab's own sentencepiece model (its sentencepiece tokenizer, by piece string).

Files written into out_dir: best.ckpt ({"model_state": ...}, what JoeyNMT's load_checkpoint
reads), src_vocab.txt / trg_vocab.txt (voc_file), src_spm.model / trg_spm.model (attnlab's
sentencepiece models), config.yaml (the peer's base config with the model sizes, these files,
model_dir=out_dir and testing.min_output_length=0: attnlab may end a sentence at once).
`joeynmt_decode_speed` times `joeynmt test` on such a config (the peer's decode_speed.sh cannot:
it derives its config from the base config, whose voc_file and sentencepiece model are the
peer's own spm8k, also of 8000 pieces, so it would load the checkpoint and decode garbage).

Search is each toolkit's own: JoeyNMT caps a batch's outputs at int(1.5 * its longest source),
attnlab each sentence at int(1.5 * its source length); greedy is an argmax in JoeyNMT and a
one-beam beam search in attnlab; their beam searches differ in how they finish hypotheses.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import torch
import yaml
from torch import Tensor, nn

from attnlab.attention import Attention
from attnlab.attention.scores import Additive
from attnlab.data.vocab import SentencePieceVocab
from attnlab.models.decoders import LuongDecoder
from attnlab.models.encoder import RNNEncoder
from attnlab.translation.corpus import Vocabularies

PEERS = Path(__file__).resolve().parents[2] / "shared" / "peers" / "joeynmt"
JOEYNMT_SPECIALS = ("<unk>", "<pad>", "<s>", "</s>")  # JoeyNMT ids 0..3, always in this order


def peers_work() -> Path:
    """The peer scripts' work folder ($PEERS_WORK, as run.sh and decode_speed.sh read it)."""
    return Path(os.environ.get("PEERS_WORK", Path.home() / ".cache" / "attnlab-peers"))


def joeynmt_python() -> Path:
    """The JoeyNMT venv's python (run.sh makes it)."""
    venv = os.environ.get("JOEYNMT_VENV", peers_work() / "joeynmt-venv")
    return Path(venv) / "bin" / "python"


def inexpressible(model: nn.Module) -> list[str]:
    """What of `model` JoeyNMT 2.3's RNN model cannot hold (besides the output bias)."""
    enc, dec = model.encoder, model.decoder
    problems = []
    if not (isinstance(enc, RNNEncoder) and enc.directions == 2):
        problems.append("the encoder must be a bidirectional RNNEncoder")
    if not isinstance(dec, LuongDecoder):
        problems.append(f"the decoder must be `luong` (update, then attend), not {type(dec)}")
        return problems
    if not isinstance(dec.rnn, nn.GRU) or dec.rnn.num_layers != 1:
        problems.append("the decoder must be a 1-layer GRU (JoeyNMT gives every layer, and an "
                        "LSTM's cell, the same bridge output; attnlab does not)")
    mechanism = dec.attention.mechanism
    if type(mechanism) is not Attention or not isinstance(mechanism.score, Additive):
        problems.append("attention must be global soft attention with the additive score")
    elif mechanism.score.query_proj.out_features != dec.rnn.hidden_size:
        problems.append("the additive score's hidden size must equal the decoder hidden size")
    if dec.output_dim != dec.rnn.hidden_size:
        problems.append("the attentional vector h~ must have the decoder's hidden size")
    if dec.output.tied is not None:
        problems.append("tied output embeddings are not supported")
    return problems


def joeynmt_pieces(vocab: SentencePieceVocab) -> tuple[list[str], Tensor]:
    """The pieces in JoeyNMT id order, and order (V,): order[joeynmt_id] = attnlab id."""
    ids = {vocab.id_to_piece(i): i for i in range(len(vocab))}
    pieces = [*JOEYNMT_SPECIALS, *(p for p in ids if p not in JOEYNMT_SPECIALS)]
    order = [ids.get(p, -1) for p in pieces]
    if sorted(order) != list(range(len(vocab))) or len(set(pieces)) != len(pieces):
        raise ValueError("the vocabulary's pieces are not unique, or lack JoeyNMT's specials")
    for piece in pieces:  # JoeyNMT reads the voc_file with str.splitlines()
        if not piece or piece.splitlines() != [piece]:
            raise ValueError(f"piece {piece!r} cannot be a voc_file line")
    return pieces, torch.tensor(order)


def joeynmt_state(model: nn.Module, src_order: Tensor, trg_order: Tensor) -> dict[str, Tensor]:
    """attnlab's parameters under JoeyNMT's state_dict keys (see the module docstring)."""
    enc, dec = model.encoder, model.decoder
    score = dec.attention.mechanism.score
    key_dim = enc.output_dim
    combine = dec.combine.weight  # (H, Dk + H) on [context; h]
    state = {
        "src_embed.lut.weight": enc.embedding.weight[src_order],
        "trg_embed.lut.weight": dec.embedding.weight[trg_order],
        **{f"encoder.rnn.{k}": v for k, v in enc.rnn.state_dict().items()},
        **{f"decoder.rnn.{k}": v for k, v in dec.rnn.state_dict().items()},
        "decoder.att_vector_layer.weight": torch.cat([combine[:, key_dim:], combine[:, :key_dim]],
                                                     dim=1),  # on [h; context]
        "decoder.att_vector_layer.bias": combine.new_zeros(combine.shape[0]),
        "decoder.output_layer.weight": dec.output.proj.weight[trg_order],
        "decoder.attention.key_layer.weight": score.key_proj.weight,
        "decoder.attention.query_layer.weight": score.query_proj.weight,
        "decoder.attention.energy_layer.weight": score.v.weight,
        "decoder.bridge_layer.weight": dec.bridge.linear.weight,
        "decoder.bridge_layer.bias": dec.bridge.linear.bias,
    }
    return {key: value.detach().float().cpu().clone() for key, value in state.items()}


def base_config() -> dict:
    """The peer's config (configs/rnn_multi30k_deen.yaml) with @WORK@ filled in, as run.sh does."""
    text = (PEERS / "configs" / "rnn_multi30k_deen.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text.replace("@WORK@", str(peers_work())))


def joeynmt_config(model: nn.Module, out_dir: Path, test_prefix: Path | None) -> dict:
    """The base config pointed at out_dir's files, with the model's sizes."""
    cfg = base_config()
    enc, dec = model.encoder, model.decoder
    cfg.update(name="attnlab_export", model_dir=str(out_dir))
    cfg["data"].pop("dev", None)  # `joeynmt test` would decode it too
    if test_prefix is not None:
        cfg["data"]["test"] = str(test_prefix)
    for side in ("src", "trg"):
        cfg["data"][side]["voc_file"] = str(out_dir / f"{side}_vocab.txt")
        cfg["data"][side]["tokenizer_cfg"]["model_file"] = str(out_dir / f"{side}_spm.model")
    for index, name in enumerate(("unk", "pad", "bos", "eos")):
        cfg["data"]["special_symbols"].update({f"{name}_token": JOEYNMT_SPECIALS[index],
                                               f"{name}_id": index})
    cfg["testing"].update(load_model=str(out_dir / "best.ckpt"), min_output_length=0)
    cfg["model"].update(tied_embeddings=False, tied_softmax=False)
    cfg["model"]["encoder"].update(
        rnn_type="gru" if isinstance(enc.rnn, nn.GRU) else "lstm", bidirectional=True,
        hidden_size=enc.rnn.hidden_size, num_layers=enc.rnn.num_layers)
    cfg["model"]["encoder"]["embeddings"].update(embedding_dim=enc.embedding.embedding_dim,
                                                 scale=False)
    cfg["model"]["decoder"].update(
        type="recurrent", rnn_type="gru", hidden_size=dec.rnn.hidden_size, num_layers=1,
        input_feeding=dec.input_feeding, init_hidden="bridge", attention="bahdanau")
    cfg["model"]["decoder"]["embeddings"].update(embedding_dim=dec.embedding.embedding_dim,
                                                 scale=False)
    return cfg


def export_to_joeynmt(model: nn.Module, vocabs: Vocabularies, out_dir: Path, *,
                      drop_output_bias: bool = False, test_prefix: Path | None = None) -> Path:
    """Write best.ckpt, the voc_files, the sentencepiece models and config.yaml for `model`
    into out_dir; returns the config path (`python -m joeynmt test CONFIG`).

    drop_output_bias: export a model whose output bias is non-zero without it (JoeyNMT has
    none; see the module docstring). test_prefix: data.test (PREFIX.de / PREFIX.en), default the
    peer's test_2016_flickr.
    """
    if problems := inexpressible(model):
        raise ValueError("JoeyNMT 2.3 cannot hold this model: " + "; ".join(problems))
    bias = model.decoder.output.proj.bias
    if bias is not None and bias.abs().max() > 0 and not drop_output_bias:
        raise ValueError(f"the output layer has a bias (max |b| = {bias.abs().max():.3g}) that "
                         "JoeyNMT's bias-free output layer cannot hold; pass "
                         "drop_output_bias=True to export the model without it")
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    orders = {}
    for side, vocab in (("src", vocabs.src), ("trg", vocabs.tgt)):
        if not isinstance(vocab, SentencePieceVocab):
            raise ValueError("only sentencepiece (bpe/unigram) vocabularies can be exported")
        pieces, orders[side] = joeynmt_pieces(vocab)
        (out_dir / f"{side}_vocab.txt").write_text("\n".join(pieces) + "\n", encoding="utf-8")
        (out_dir / f"{side}_spm.model").write_bytes(vocab.processor.serialized_model_proto())
    state = joeynmt_state(model, orders["src"], orders["trg"])
    dropped = 0.0 if bias is None else float(bias.detach().abs().max())
    torch.save({"model_state": state, "steps": 0, "attnlab_output_bias_dropped": dropped},
               out_dir / "best.ckpt")
    config = out_dir / "config.yaml"
    with config.open("w", encoding="utf-8") as file:
        file.write("# written by attnlab benchmarks/joeynmt_export.py from the peer's "
                   f"base config; attnlab output bias dropped: max |b| = {dropped:.4g}\n")
        yaml.safe_dump(joeynmt_config(model, out_dir, test_prefix), file, sort_keys=False)
    return config


def joeynmt_test(config: Path, beam: int, *, threads: int = 1,
                 batch_size: int = 64) -> tuple[float, Path]:
    """`joeynmt test` on config's data.test with `beam` (batch of `batch_size` sentences, as
    the peer's decode_speed.sh) -> (JoeyNMT's "Generation took" seconds, the output file)."""
    cfg = yaml.safe_load(Path(config).read_text(encoding="utf-8"))
    cfg["testing"].update(beam_size=beam, batch_size=batch_size, batch_type="sentence")
    work = Path(cfg["model_dir"]) / "decode"
    work.mkdir(parents=True, exist_ok=True)
    derived, prefix = work / f"beam{beam}.yaml", work / f"beam{beam}"
    derived.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    done = subprocess.run([str(joeynmt_python()), "-m", "joeynmt", "test", str(derived), "-o",
                           str(prefix)], env=env, capture_output=True, text=True)
    (work / f"beam{beam}.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    took = re.findall(r"Generation took ([\d.]+)", done.stdout + done.stderr)
    if done.returncode or not took:
        raise RuntimeError(f"joeynmt test failed, see {work / f'beam{beam}.log'}:\n"
                           f"{(done.stdout + done.stderr)[-2000:]}")
    return float(took[-1]), Path(f"{prefix}.test")


def sacrebleu(hypotheses: Path, reference: Path) -> float:
    """sacreBLEU of a file against a reference file, as decode_speed.sh computes it."""
    done = subprocess.run([str(joeynmt_python()), "-m", "sacrebleu", str(reference), "-i",
                           str(hypotheses), "-m", "bleu", "-b", "-w", "2"],
                          capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def joeynmt_decode_speed(config: Path, beams: tuple[int, ...] = (1, 5), *,
                         threads: int = 1) -> dict[int, tuple[float, float, list[str]]]:
    """Decode an exported model's test set with `joeynmt test`, like the peer's
    decode_speed.sh (sentences/s from "Generation took", batch 64, sacreBLEU against
    data.test's target file) but on the exported files and with `threads` OpenMP threads:
    beam -> (sentences/s, BLEU, the translations)."""
    cfg = yaml.safe_load(Path(config).read_text(encoding="utf-8"))
    reference = Path(f"{cfg['data']['test']}.{cfg['data']['trg']['lang']}")
    speeds = {}
    for beam in beams:
        seconds, output = joeynmt_test(config, beam, threads=threads)
        lines = output.read_text(encoding="utf-8").splitlines()
        speeds[beam] = (len(lines) / seconds, sacrebleu(output, reference), lines)
    return speeds
