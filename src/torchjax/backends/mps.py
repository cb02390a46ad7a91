"""torchjax.backends.mps: Apple's Metal backend, which torchjax does not have."""

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
