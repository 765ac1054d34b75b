"""Image captioning with soft and hard attention (Xu et al. 2015, Show, Attend and Tell).

    attnlab data shapes --dest data/shapes
    attnlab caption train configs/shapes-soft.yaml --run runs/shapes-soft
    attnlab caption evaluate --run runs/shapes-soft
    attnlab caption plot --run runs/shapes-soft data/shapes/images/000010.png --output a.png
"""

from .config import (
    AttentionConfig,
    DataConfig,
    DecodeConfig,
    DecoderConfig,
    EncoderConfig,
    ModelConfig,
    RunConfig,
)
from .data import CaptionedImage, ObjectBox, read_karpathy
from .evaluate import Localisation, caption_bleu, caption_metrics, cell_coverage, localise
from .figure import attention_figure
from .inference import Caption, caption_images
from .model import Captioner, ShowAttendTellDecoder, build_captioner, doubly_stochastic_penalty
from .run import evaluate_split, load_trained, plot_caption, train_captioning
from .shapes import write_shapes
from .task import CaptionTask

__all__ = [
    "AttentionConfig", "Caption", "CaptionTask", "CaptionedImage", "Captioner", "DataConfig",
    "DecodeConfig", "DecoderConfig", "EncoderConfig", "Localisation", "ModelConfig",
    "ObjectBox", "RunConfig", "ShowAttendTellDecoder", "attention_figure", "build_captioner",
    "caption_bleu", "caption_images", "caption_metrics", "cell_coverage",
    "doubly_stochastic_penalty", "evaluate_split", "load_trained", "localise", "plot_caption",
    "read_karpathy", "train_captioning", "write_shapes",
]
