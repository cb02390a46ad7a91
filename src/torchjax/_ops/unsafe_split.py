"""Op-table rows: torch.unsafe_split, unsafe_split_with_sizes and unsafe_chunk (and their
Tensor methods). PyTorch's "unsafe" forms give the same pieces as split and chunk, sharing the
input's memory, under their own backward node (UnsafeSplitBackward0, printed in a result's
grad_fn); the pieces are split's and chunk's own functions."""

from __future__ import annotations

import numbers

from ._registry import op
from .shape import _split_size, chunk, split_with_sizes

_FLAGS = dict(promote="none", needs=(), view=True)


def _check_split_size(split_size, **_):
    # (PyTorch's parser; the sizes-list form is unsafe_split_with_sizes). A check, not in the
    # row: it sees the argument as given, before a list becomes a hashable tuple
    if not isinstance(split_size, numbers.Integral):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")


@op(check=_check_split_size, **_FLAGS)
def unsafe_split(input, split_size, dim=0):
    """split(input, split_size, dim) under UnsafeSplitBackward0."""
    return _split_size(input, split_size, dim)


@op(**_FLAGS)
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """split(input, split_sizes, dim) under UnsafeSplitWithSizesBackward0."""
    return split_with_sizes(input, split_sizes, dim)


@op(grad="UnsafeSplitBackward0", **_FLAGS)
def unsafe_chunk(input, chunks, dim=0):
    """chunk(input, chunks, dim) under UnsafeSplitBackward0."""
    return chunk(input, chunks, dim)
