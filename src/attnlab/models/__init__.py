"""Every architecture, built from attnlab.attention: translation encoder-decoders (no attention,
Bahdanau, Luong, the Transformer), the Show-Attend-Tell captioner and its image encoders, the
LSTMN and the language model. `build.py` is the only module that reads their config."""

from .attention_layer import AttentionLayer, Memory
from .build import (
    build_attention,
    build_captioner,
    build_encoder,
    build_image_encoder,
    build_language_model,
    build_model,
)
from .captioner import (
    Captioner,
    CaptionLoss,
    CaptionOutput,
    ShowAttendTellDecoder,
    doubly_stochastic_penalty,
    set_hard_decoding,
)
from .config import (
    AttentionConfig,
    CaptionAttentionConfig,
    CaptionDecoderConfig,
    CaptionerConfig,
    DecoderConfig,
    EncoderConfig,
    ImageEncoderConfig,
    LanguageModelConfig,
    ModelConfig,
)
from .decoder_base import DecoderOutput, DecoderState
from .encoder import EncoderOutput, RNNEncoder
from .image_encoder import ConvEncoder, ResNetEncoder, refresh_batch_norm
from .language_model import LanguageModel, LanguageModelOutput, LSTMReader, count_parameters
from .lstmn import LSTMN, LSTMNEncoder, LSTMNOutput
from .multihead import KeyValues, MultiHeadAttention
from .seq2seq import Seq2Seq, TranslationLoss
from .transformer import TransformerDecoder, TransformerEncoder

__all__ = [
    "AttentionConfig", "AttentionLayer", "CaptionAttentionConfig", "CaptionDecoderConfig",
    "CaptionLoss", "CaptionOutput", "Captioner", "CaptionerConfig", "ConvEncoder", "DecoderConfig",
    "DecoderOutput", "DecoderState", "EncoderConfig", "EncoderOutput", "ImageEncoderConfig",
    "KeyValues", "LSTMN", "LSTMNEncoder", "LSTMNOutput", "LSTMReader", "LanguageModel",
    "LanguageModelConfig", "LanguageModelOutput", "Memory", "ModelConfig", "MultiHeadAttention",
    "RNNEncoder", "ResNetEncoder", "Seq2Seq", "ShowAttendTellDecoder", "TransformerDecoder",
    "TransformerEncoder", "TranslationLoss", "build_attention", "build_captioner", "build_encoder",
    "build_image_encoder", "build_language_model", "build_model", "count_parameters",
    "doubly_stochastic_penalty", "refresh_batch_norm", "set_hard_decoding",
]
