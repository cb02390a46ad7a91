"""torchjax.nn"""
