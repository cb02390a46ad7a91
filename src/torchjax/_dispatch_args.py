"""Eager dispatch's view of a call's arguments: unwrapping tensors to arrays (whether any
requires grad), the compute dtype PyTorch's promotion gives, and the handlers of tensors of
another layout. Split out of _dispatch.py; re-exported from there."""

from __future__ import annotations

import numbers

from . import _dtypes
from ._pure import _L, _SCALARS, _T
from ._tensor import Tensor


def _arg_error(op, i, v):
    name = op.dynamic[i]
    return TypeError(f"{op.name}(): argument '{name}' (position {i + 1}) must be Tensor, not "
                     f"{type(v).__name__}")


def _unwrap(prep, dyn):
    """(arrays, any input requires grad, values that take part in promotion)."""
    arrays = []
    rg = False
    for i, (k, v) in enumerate(zip(prep.kinds, dyn)):
        if k == _T:
            if isinstance(v, Tensor):
                arrays.append(v._data)
                rg = rg or v._requires_grad
            elif v is None or v.__class__ in _SCALARS or isinstance(v, numbers.Number):
                arrays.append(v)
            else:
                raise _arg_error(prep.op, i, v)
        elif k == _L:
            if isinstance(v, Tensor) or not isinstance(v, (list, tuple)):
                raise TypeError(f"{prep.op.name}(): argument '{prep.names[i]}' (position "
                                f"{i + 1}) must be tuple of Tensors, not {type(v).__name__}")
            seq = []
            for j, x in enumerate(v):
                if not isinstance(x, Tensor):  # PyTorch's words
                    raise TypeError(f"expected Tensor as element {j} in argument {i}, but got "
                                    f"{type(x).__name__}")
                seq.append(x._data)
                rg = rg or x._requires_grad
            arrays.append(tuple(seq))
        else:
            arrays.append(v)
    return arrays, rg


def _promotion_values(prep, dyn):
    vals = []
    for k, v in zip(prep.promote_kinds, dyn):
        if k == _T:
            vals.append(v)
        elif k == _L:
            vals.extend(v)
    return vals


def _compute_dtype(prep, dyn, stat):
    mode = prep.op.promote
    if mode == "none":
        return None
    cd = _dtypes.result_type_of(dyn if prep.simple else _promotion_values(prep, dyn))
    if mode == "float":
        if not (cd.is_floating_point or cd.is_complex):
            cd = _dtypes.get_default_dtype()
    elif mode != "all":
        cd = mode(cd, dict(zip(prep.op.statics, stat)))
    return cd


# Tensors of another layout (torchjax.sparse's COO tensors) hold an object JAX refuses, so a
# row they reach fails in its compiled call and lands here: dense calls pay nothing for them.
# The layout's package registers layout -> (handlers, error): handlers maps a row's name to
# handler(prep, dyn, stat), the row's implementation for that layout; error(op name, tensor)
# makes the exception for the rows it does not implement (never a silent densification).
LAYOUTS: dict = {}


def _layout_handler(prep, dyn, inplace=False):
    """The handler of the first non-strided tensor argument, or None when there is none;
    raises that layout's error when the row has no handler (in-place rows never do)."""
    for k, v in zip(prep.kinds, dyn):
        for t in (v if k == _L else (v,)):
            if isinstance(t, Tensor):
                entry = LAYOUTS.get(t.layout)
                if entry is not None:
                    handlers, error = entry
                    handler = None if inplace else handlers.get(prep.op.name)
                    if handler is None:
                        raise error(prep.op.name + ("_" if inplace else ""), t)
                    return handler
    return None
