"""Tensor.view(dtype): the same bytes read as another dtype, a view (writes through it reach
the base, as PyTorch's). Element sizes may differ: the last dimension then grows or shrinks
by their ratio. The result does not take part in autograd, as PyTorch's does not."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from .. import _dtypes
from ._registry import function, op


def _bitcast(x, target):
    """x's bytes as dtype `target` (the last dim rescaled when the sizes differ)."""
    source = jnp.dtype(x.dtype)
    target = jnp.dtype(target)
    as_bool = target == jnp.bool_
    if source == jnp.bool_:  # XLA bitcasts no bool: its bytes are those of a uint8 0 or 1
        x, source = x.astype(jnp.uint8), jnp.dtype(jnp.uint8)
    if as_bool:
        target = jnp.dtype(jnp.uint8)
    if target.itemsize < source.itemsize:
        out = lax.bitcast_convert_type(x, target)  # a trailing dim of the ratio
        out = out.reshape(*x.shape[:-1], x.shape[-1] * out.shape[-1])
    elif target.itemsize > source.itemsize:
        r = target.itemsize // source.itemsize
        out = lax.bitcast_convert_type(x.reshape(*x.shape[:-1], x.shape[-1] // r, r), target)
    else:
        out = lax.bitcast_convert_type(x, target)
    return out != 0 if as_bool else out


def _write_back(input, new, dtype):
    return _bitcast(new, input.dtype)


@op(promote="none", needs=(), view=True, function=False, method=False, differentiable=False,
    view_write=_write_back)
def _view_dtype(input, dtype):
    return _bitcast(input, dtype.np)


def _generated(name):
    from .._dispatch import FUNCTIONS  # (the op table's function forms, made after import)
    return FUNCTIONS[name]


def _name(d) -> str:
    return _dtypes.SCALAR_NAMES[d.name]


def _invalid(args: tuple) -> TypeError:
    got = ", ".join("torch.dtype" if isinstance(a, _dtypes.dtype) else type(a).__name__
                    for a in args)
    return TypeError(f"view() received an invalid combination of arguments - got ({got}), but "
                     "expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n")


@function(name="view", function=False)
def view(self, *shape, dtype=None, size=None):
    """view(*shape) or view(size=...): the same values with a new shape; view(dtype): the same
    bytes as another dtype. Both are views: writes reach the original."""
    if size is not None:
        if shape or dtype is not None:
            raise _invalid(shape)
        shape = (size,)
    elif dtype is not None:
        if shape:
            raise _invalid(shape)
    elif len(shape) == 1 and isinstance(shape[0], _dtypes.dtype):
        dtype = shape[0]
    elif not shape or any(isinstance(a, (_dtypes.dtype, str)) for a in shape):
        raise _invalid(shape)
    if dtype is None:
        return _generated("view")(self, *shape)
    dtype = _dtypes.to_dtype(dtype)
    src = self.dtype
    if src.is_complex or dtype.is_complex:
        raise NotImplementedError("view(dtype) between complex and other dtypes: use "
                                  "view_as_real / view_as_complex")
    if dtype.itemsize != src.itemsize:
        what = f"to view {_name(src)} as {_name(dtype)} (different element sizes)"
        if self.dim() == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if self.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self.stride(-1)}")
        if dtype.itemsize > src.itemsize:
            r = dtype.itemsize // src.itemsize
            if self.size(-1) % r:
                raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got "
                                   f"{self.size(-1)}")
    return _generated("_view_dtype")(self, dtype)
