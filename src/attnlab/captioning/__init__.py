"""Image captioning, a recipe on the library: Show, Attend and Tell with soft and hard attention
(Xu et al. 2015). The model itself lives in attnlab.models (Captioner).

    attnlab data shapes --dest data/shapes
    attnlab train shapes-soft --run runs/shapes-soft
    attnlab evaluate --run runs/shapes-soft
    attnlab plot --run runs/shapes-soft data/shapes/images/000010.png --output a.png
"""

from .config import DataConfig, DecodeConfig, RunConfig
from .data import CaptionedImage, ObjectBox, read_karpathy
from .evaluate import evaluate_split
from .figure import plot_caption
from .inference import Caption, caption_images
from .metrics import Localisation, caption_bleu, caption_metrics, cell_coverage, localise
from .run import CaptionEvaluation, CaptioningRun
from .shapes import write_shapes
from .task import CaptionTask

__all__ = [
    "Caption", "CaptionEvaluation", "CaptionTask", "CaptionedImage", "CaptioningRun",
    "DataConfig", "DecodeConfig", "Localisation", "ObjectBox", "RunConfig", "caption_bleu",
    "caption_images", "caption_metrics", "cell_coverage", "evaluate_split", "localise",
    "plot_caption", "read_karpathy", "write_shapes",
]
