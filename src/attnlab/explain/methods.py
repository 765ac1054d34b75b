"""The attributions' names, labels and integrated gradients' default points, apart from
attribution.py (which imports torch and captum), so that the command line and suite files can
check a method's name without loading a model's libraries; and the names of the extractions
that read a model trained the other way beside it (translation.alignment.extractions), for
the same reason (compare's report names them without loading a model)."""

METHODS = ("gradient", "integrated_gradients", "erasure")
LABELS = {"attention": "attention", "gradient": "gradient x input",
          "integrated_gradients": "integrated gradients", "erasure": "erasure"}
STEPS = 32      # integrated gradients' points: rows meet completeness to about 1e-3 on the demo

# Links from a reverse model (target to source): its own argmax, and the two directions joined as
# a statistical aligner's are (Och & Ney 2003; Koehn et al. 2003), with aligner.symmetrise's method
REVERSE = "attention, reverse model"
JOINED = {"attention, both directions intersected": "intersection",
          "attention, both directions grow-diag-final": "grow-diag-final"}
