"""The attributions' names, labels and integrated gradients' default points, apart from
attribution.py (which imports torch and captum), so that the command line and suite files can
check a method's name without loading a model's libraries."""

METHODS = ("gradient", "integrated_gradients", "erasure")
LABELS = {"attention": "attention", "gradient": "gradient x input",
          "integrated_gradients": "integrated gradients", "erasure": "erasure"}
STEPS = 32      # integrated gradients' points: rows meet completeness to about 1e-3 on the demo
