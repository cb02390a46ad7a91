"""torch.as_strided_copy: the as_strided view, copied (PyTorch's functional "_copy" form)."""

from __future__ import annotations

__all__ = ["as_strided_copy"]


def as_strided_copy(input, size, stride, storage_offset=None):
    """A new tensor holding as_strided(input, size, stride, storage_offset)'s elements."""
    # the package's op, registered after this module is imported
    from . import as_strided, contiguous_format
    # a new contiguous tensor, as PyTorch's copy is, whatever the view's strides
    return as_strided(input, size, stride, storage_offset).clone(
        memory_format=contiguous_format)
