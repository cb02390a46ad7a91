"""torch.unravel_index: flat indices into a tuple of coordinate tensors for a shape."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

from . import _dtypes
from ._tensor import Tensor
from ._x64 import scoped

__all__ = ["unravel_index"]


def _dims(shape) -> tuple:
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        return (int(shape),)
    if not isinstance(shape, Sequence):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for d in shape:
        if not isinstance(d, numbers.Integral):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(d)}")
    dims = tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {dims}")
    return dims


@scoped
def unravel_index(indices: Tensor, shape) -> tuple:
    """(indices // prod(shape[i+1:])) % shape[i] for each dim i, in int64, each shaped as
    indices. Indices out of range wrap around (PyTorch does not check them)."""
    if indices.is_complex() or indices.is_floating_point() or indices.dtype is _dtypes.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    dims = _dims(shape)
    flat = indices.to(_dtypes.int64)
    out = []
    for i, d in enumerate(dims):
        # floor division and remainder: Python's rounding, so -1 is the last element
        out.append(flat.floor_divide(math.prod(dims[i + 1:])).remainder(d))
    return tuple(out)
