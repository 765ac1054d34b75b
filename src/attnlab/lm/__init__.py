"""Language modelling, a recipe on the library: next-word prediction with an LSTMN or an LSTM.

    config = load_config(config_path("lm-multi30k-lstmn"), LMRunConfig)  # attnlab.configs
    run_experiment(LanguageModelTask, config, "runs/lm-lstmn")      # attnlab.train
    evaluate_perplexity("runs/lm-lstmn", "data/multi30k/test_2016_flickr.en.gz")
    plot_run_self_attention("runs/lm-lstmn", "A man in a blue shirt is standing on a ladder .")
"""

from .config import LanguageModelConfig, LMRunConfig, TextConfig
from .evaluate import PerplexityResult, evaluate_perplexity
from .figure import plot_reading_to, plot_run_self_attention, read_run
from .loading import TrainedLanguageModel, load_language_model
from .reading import read_with_language_model
from .task import LanguageModelTask

__all__ = [
    "LMRunConfig", "LanguageModelConfig", "LanguageModelTask", "PerplexityResult",
    "TextConfig", "TrainedLanguageModel", "evaluate_perplexity", "load_language_model",
    "plot_reading_to", "plot_run_self_attention", "read_run", "read_with_language_model",
]
