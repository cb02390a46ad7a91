"""A directory for sys.path whose `torch` module is torchjax: see torchjax._install."""
