"""Translation: config, data preparation, the training task and inference."""

from .config import DataConfig, DecodeConfig, LossConfig, RunConfig
from .corpus import Vocabularies
from .inference import greedy_translate, translate_sentences
from .task import TranslationTask

__all__ = ["DataConfig", "DecodeConfig", "LossConfig", "RunConfig", "TranslationTask",
           "Vocabularies", "greedy_translate", "translate_sentences"]
