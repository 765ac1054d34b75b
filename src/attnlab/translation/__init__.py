"""Translation: config, data preparation, the training task and inference."""

from .config import DataConfig, DecodeConfig, LossConfig, RunConfig
from .corpus import Vocabularies
from .inference import Translation, greedy_translate
from .task import TranslationTask

__all__ = ["DataConfig", "DecodeConfig", "LossConfig", "RunConfig", "Translation",
           "TranslationTask", "Vocabularies", "greedy_translate"]
