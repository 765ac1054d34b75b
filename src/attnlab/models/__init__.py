"""Models built from attnlab.attention: translation encoder-decoders (more to come)."""

from .build import build_model
from .config import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig
from .decoder_base import DecoderOutput, DecoderState
from .encoder import EncoderOutput, RNNEncoder
from .lstmn import LSTMN, LSTMNEncoder, LSTMNOutput
from .seq2seq import Seq2Seq, TranslationLoss

__all__ = [
    "AttentionConfig", "DecoderConfig", "DecoderOutput", "DecoderState", "EncoderConfig",
    "EncoderOutput", "LSTMN", "LSTMNEncoder", "LSTMNOutput", "ModelConfig", "RNNEncoder",
    "Seq2Seq", "TranslationLoss", "build_model",
]
