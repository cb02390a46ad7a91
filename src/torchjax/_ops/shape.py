"""Shape rows: view, reshape, flatten, squeeze, permute, transpose, expand, cat, stack, split."""

from __future__ import annotations

import jax.numpy as jnp

from ._registry import op


def _shape_arg(shape):
    """view(2, 3), view((2, 3)) and view([2, 3]) all mean the shape (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _view_explain(input, shape, **_):
    shape = _shape_arg(shape)
    size = 1
    for d in input.shape:
        size *= d
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if (-1 in shape and (known == 0 or size % known)) or (-1 not in shape and known != size):
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of "
                           f"size {size}")


@op(promote="none", needs=(), view=True, explain=_view_explain, function=False)
def view(input, *shape):
    """The same values with a new shape (a view: writes reach the original)."""
    return jnp.reshape(input, _shape_arg(shape))


@op(promote="none", needs=(), view=True, explain=_view_explain, grad="ViewBackward0")
def reshape(input, *shape):
    """The same values with a new shape."""
    return jnp.reshape(input, _shape_arg(shape))


@op(promote="none", needs=(), view=True)
def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    return jnp.swapaxes(input, dim0, dim1)
