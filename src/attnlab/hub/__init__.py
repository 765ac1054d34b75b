"""Trained models to hand over and to use from Python: `export_model` writes a run's chosen
checkpoint as a self-contained model directory (weights, config, vocabularies, MODEL.md) that
every command reads as a run; `load` opens a run or model directory as an object with its
task's verbs (translate, caption, read / perplexity).

    export_model("runs/bahdanau", "models/bahdanau")          # attnlab export
    attnlab.load("models/bahdanau").translate(["Ein Mann spielt Gitarre ."], beam=5)
    attnlab.load(["runs/seed-1", "runs/seed-2"]).translate(lines)   # an ensemble
"""

from .export import Export, export_model, folder_bytes
from .loaded import (
    EnsembleTranslator,
    ImageCaptioner,
    LanguageModelReader,
    LoadedModel,
    Translator,
    load,
)

__all__ = ["EnsembleTranslator", "Export", "ImageCaptioner", "LanguageModelReader",
           "LoadedModel", "Translator", "export_model", "folder_bytes", "load"]
