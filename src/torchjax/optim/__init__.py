"""torchjax.optim"""
