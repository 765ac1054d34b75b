"""The attributions' names, labels and integrated gradients' default points and tolerance,
apart from attribution.py (which imports torch), so that the command line and suite files can
check a method's name without loading a model's libraries; and the names of the extractions
that read a model trained the other way beside it (translation.alignment.extractions), for
the same reason (compare's report names them without loading a model)."""

METHODS = ("gradient", "integrated_gradients", "erasure")
LABELS = {"attention": "attention", "gradient": "gradient x input",
          "integrated_gradients": "integrated gradients", "erasure": "erasure"}
# Integrated gradients start at STEPS points and add more until the worst row's completeness gap
# is at most TOLERANCE nats, or stop at MAX_STEPS points and say so (attnlab.explain.integrated).
# One 32-point rule, the default before, missed by a median 0.02 nats on the dates runs (0.12 on
# a demo model), not the 1e-3 this line claimed.
STEPS = 16
TOLERANCE = 0.01
MAX_STEPS = 256

# Links from a reverse model (target to source): its own argmax, and the two directions joined as
# a statistical aligner's are (Och & Ney 2003; Koehn et al. 2003), with aligner.symmetrise's method
REVERSE = "attention, reverse model"
JOINED = {"attention, both directions intersected": "intersection",
          "attention, both directions grow-diag-final": "grow-diag-final"}
