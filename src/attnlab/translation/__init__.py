"""Translation, a recipe on the library: config, data, the training task, the trained run
(TranslationRun: translate, stream, evaluate, plot), text decoding, alignment, evaluation,
figures and reports."""

from .config import DataConfig, DecodeConfig, LossConfig, RunConfig
from .corpus import Vocabularies
from .labels import LabelledAttention
from .run import TranslationRun
from .task import TranslationTask
from .translate import (
    TranslationResult,
    iter_translate,
    translate,
)

__all__ = ["DataConfig", "DecodeConfig", "LabelledAttention", "LossConfig", "RunConfig",
           "TranslationResult", "TranslationRun", "TranslationTask", "Vocabularies",
           "iter_translate", "translate"]
