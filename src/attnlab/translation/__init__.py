"""Translation, a recipe on the library: config, data, the training task, text decoding
(translate, forced alignment, word labels), evaluation, figures and reports."""

from .config import DataConfig, DecodeConfig, LossConfig, RunConfig
from .corpus import Vocabularies
from .forced import ForcedAlignment, forced_alignment
from .labels import LabelledAttention
from .loading import TrainedRun, load_run
from .task import TranslationTask
from .translate import (
    TranslationResult,
    iter_translate,
    translate,
)

__all__ = ["DataConfig", "DecodeConfig", "ForcedAlignment", "LabelledAttention", "LossConfig",
           "RunConfig", "TrainedRun", "TranslationResult", "TranslationTask", "Vocabularies",
           "forced_alignment", "iter_translate", "load_run", "translate"]
