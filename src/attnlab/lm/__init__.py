"""Language modelling, a recipe on the library: next-word prediction with an LSTMN or an LSTM.

    attnlab train lm-multi30k-lstmn --run runs/lm-lstmn           # attnlab.train
    run = LanguageModelRun.load("runs/lm-lstmn")
    run.evaluate(text="data/multi30k/test_2016_flickr.en.gz").perplexity
    run.plot("A man in a blue shirt is standing on a ladder .", "reading.png")
"""

from .config import LanguageModelConfig, LMRunConfig, TextConfig
from .evaluate import PerplexityResult
from .figure import plot_reading_to
from .reading import read_with_language_model
from .run import LanguageModelRun
from .task import LanguageModelTask

__all__ = [
    "LMRunConfig", "LanguageModelConfig", "LanguageModelRun", "LanguageModelTask",
    "PerplexityResult", "TextConfig", "plot_reading_to", "read_with_language_model",
]
