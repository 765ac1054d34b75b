"""Language modelling: next-word prediction with an LSTMN or an LSTM, through the shared loop.

    config = load_config("configs/lm-multi30k-lstmn.yaml", LMRunConfig)
    train_language_model(config, "runs/lm-lstmn")
    evaluate_perplexity("runs/lm-lstmn", "data/multi30k/test_2016_flickr.en.gz")
    plot_run_self_attention("runs/lm-lstmn", "A man in a blue shirt is standing on a ladder .")
"""

from .config import LanguageModelConfig, LMRunConfig, TextConfig
from .evaluate import PerplexityResult, evaluate_perplexity
from .figure import plot_run_self_attention, read_run
from .model import LanguageModel, build_language_model, count_parameters
from .reading import SentenceReading
from .run import load_language_model, train_language_model
from .task import LanguageModelTask

__all__ = [
    "LMRunConfig", "LanguageModel", "LanguageModelConfig", "LanguageModelTask",
    "PerplexityResult", "SentenceReading", "TextConfig", "build_language_model",
    "count_parameters", "evaluate_perplexity", "load_language_model",
    "plot_run_self_attention", "read_run", "train_language_model",
]
