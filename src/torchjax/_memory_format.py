"""torch.memory_format: the orders PyTorch can lay a tensor's elements out in.

Kept as metadata (see _strides.py): the arrays are XLA's, which chooses its own layouts.
"""

from __future__ import annotations


class memory_format:
    """A memory format; compared by identity, printed as torch.<name>."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name  # pickles as the module attribute of that name

    def _program_name(self) -> str:
        # (the program cache's name for it, _program_names.describe: without one, an op
        # given a memory_format, `contiguous()`'s clone among them, was a plain jax.jit,
        # compiled per shape in every process and never evaluated by the host tier)
        return self.name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def check(value, fname: str):
    """A memory_format= argument: None or a torch.memory_format."""
    if value is not None and not isinstance(value, memory_format):
        raise TypeError(f"{fname}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(value).__name__}")
    return value
