"""attnlab: train, compare and see the classic attention mechanisms."""

from attnlab.version import __version__

__all__ = ["__version__", "load", "show"]


def load(path, *, checkpoint=None, device="cpu"):
    """A run directory, or a model directory `attnlab export` wrote, loaded as its task's Run:
    a TranslationRun (translate(lines, beam=, n_best=), stream, evaluate), CaptioningRun
    (caption(images)) or LanguageModelRun (read(sentence), perplexity(lines)); a list of
    translation runs is their ensemble, with the same methods. `checkpoint`: "best", "last",
    or None for best-else-last; `device`: "cpu", "cuda", "auto"... See attnlab.recipes.load."""
    from attnlab.recipes import load as load_model  # here, so that `import attnlab` stays light

    return load_model(path, checkpoint=checkpoint, device=device)


def show(value):
    """Draw a result inline in a notebook as the explorer draws it (a translation, caption or
    LSTMN reading, a list of them, {label: translation} side by side, or a suite's records);
    elsewhere print its plain table. See attnlab.viz.notebook."""
    from attnlab.viz.notebook import show as show_view  # here, so that `import attnlab` stays light

    show_view(value)
