"""Composite nn.functional forms, one file per area; torchjax.nn.functional re-exports each file's __all__."""
