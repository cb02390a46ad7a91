"""torchjax.cpu: PyTorch's torch.cpu module (the host device; always available)."""

from __future__ import annotations

from . import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available() -> bool:
    """Always True: the host is always there.

    See https://pytorch.org/docs/stable/cpu.html.
    """
    return True


def device_count() -> int:
    """Always 1: PyTorch counts the host as one CPU device.

    See https://pytorch.org/docs/stable/cpu.html.
    """
    return 1


def current_device() -> str:
    """Always "cpu".

    See https://pytorch.org/docs/stable/cpu.html.
    """
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: torchjax's CPU results are ready when they are read."""
