"""Trained models to hand over: `export_model` writes a run's chosen checkpoint as a
self-contained model directory (weights, config, vocabularies, MODEL.md) that every command and
`attnlab.load` read as a run.

    export_model("runs/bahdanau", "models/bahdanau")          # attnlab export
    attnlab.load("models/bahdanau").translate(["Ein Mann spielt Gitarre ."], beam=5)
"""

from .export import Export, export_model, folder_bytes

__all__ = ["Export", "export_model", "folder_bytes"]
