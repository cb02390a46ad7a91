"""torchjax.backends.mkl: Intel MKL, which torchjax does not call."""

__all__ = ["is_available"]


def is_available() -> bool:
    return False
