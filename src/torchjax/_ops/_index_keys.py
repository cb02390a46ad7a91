"""Parsing an index key (x[0, 1:, None, idx]) against a shape, for Tensor.__getitem__ and
__setitem__ (indexing.py): a static, hashable spec (an int, a (start, stop, step) slice, None,
or a placeholder for an index array per key element) and the index tensors, with PyTorch's
errors for keys it refuses."""

from __future__ import annotations

import operator
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .._untraceable import Untraceable

# Spec placeholders: an index array on the next input dim, and a Python bool (a new dim of
# size 1 indexed by [0] or by [], as PyTorch does).
_ARR = "i"
_BOOL = "b"


def _is_tracer(a):
    return isinstance(a, jax.core.Tracer)


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _check_in_bounds(arr, size, what):
    """Raise what(v) for the first entry of a concrete index array outside [-size, size)."""
    if _is_tracer(arr) or arr.size == 0:
        return
    a = np.asarray(arr)
    bad = (a < -size) | (a >= size)
    if bad.any():
        raise what(int(a[bad][0]))


def _as_sequence_key(key):
    """PyTorch reads a short list holding slices, None, Ellipsis, tensors or lists as a tuple."""
    if len(key) >= 32 or not any(
            x is None or x is Ellipsis or isinstance(x, (slice, Tensor, list, tuple))
            for x in key):
        return None
    warnings.warn(
        "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
        "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
        "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
        "error or a different result", UserWarning, stacklevel=5)  # 5: + the composite's scope
    return tuple(key)


_INDEX_DTYPES = "tensors used as indices must be long, int, byte or bool tensors"


def _classify(x):
    """One key element as ("int", k) | ("slice", s) | ("none",) | ("ellipsis",) |
    ("bool", b) | ("index", Tensor) | ("mask", Tensor)."""
    if x is None:
        return ("none",)
    if x is Ellipsis:
        return ("ellipsis",)
    if isinstance(x, (bool, np.bool_)):
        return ("bool", bool(x))
    if isinstance(x, (int, np.integer)):
        return ("int", int(x))
    if isinstance(x, slice):
        return ("slice", x)
    if isinstance(x, (list, tuple, range, np.ndarray)):  # a sequence of ints or bools
        a = np.asarray(x)
        if a.size == 0 and a.dtype.kind == "f":
            a = a.astype(np.int64)
        if a.dtype.kind == "b":
            if a.ndim == 0:
                return ("bool", bool(a))
            return ("mask", Tensor._wrap(jnp.asarray(a)))
        if a.dtype.kind in "iu":
            if a.ndim == 0:
                return ("int", int(a))
            return ("index", Tensor._wrap(jnp.asarray(a, dtype=jnp.int64)))
        raise IndexError(_INDEX_DTYPES)
    if isinstance(x, Tensor):
        dt = x._data.dtype
        if dt == jnp.bool_ or dt == jnp.uint8:
            if dt == jnp.uint8:
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                              "dtype torch.bool instead.", UserWarning, stacklevel=4)
            if x.ndim == 0 and not _is_tracer(x._data):
                return ("bool", bool(x._data))
            return ("mask", x)
        if not jnp.issubdtype(dt, jnp.integer):
            raise IndexError(_INDEX_DTYPES)
        if x.ndim == 0 and not _is_tracer(x._data):
            return ("int", int(x._data))  # a 0-d integer tensor selects, like an int
        return ("index", x)
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(x).__name__})")


class _Parsed:
    """A key resolved against a shape: spec, index tensors, result shape, grad name."""

    __slots__ = ("spec", "indices", "shape", "last", "advanced", "single_mask")


def _parse(self, key, index_put=False):
    shape = tuple(self._data.shape)
    if isinstance(key, tuple):
        bare = False
    elif isinstance(key, list) and (seq := _as_sequence_key(key)) is not None:
        key, bare = seq, False
    else:
        key, bare = (key,), True
    items = [_classify(k) for k in key]
    if not shape and any(c[0] == "int" for c in items):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    used = sum(c[1].ndim if c[0] == "mask" else c[0] in ("int", "slice", "index")
               for c in items)
    if used > len(shape):
        extra = f" (got {used})" if index_put else ""
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}{extra}")

    spec, indices = [], []
    cur = []         # the shape after the basic part, index-array dims kept whole
    adv_dims = []    # dims of cur that index arrays address
    last = None      # PyTorch's grad_fn of the basic part: its last non-trivial step
    d = 0
    for p, c in enumerate(items):
        kind = c[0]
        if kind == "int":
            n = shape[d]
            k = c[1]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {p} with size {n}")
            spec.append(k % n)
            last = "_select"
            d += 1
        elif kind == "slice":
            s = c[1]
            step = 1 if s.step is None else operator.index(s.step)
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step < 0:
                raise ValueError("step must be greater than zero")
            n = shape[d]
            start, stop, _ = slice(s.start, s.stop, step).indices(n)
            stop = max(stop, start)
            spec.append((start, stop, step))
            if (start, stop, step) != (0, n, 1) or bare:
                last = "_slice"
            cur.append(-(-(stop - start) // step))
            d += 1
        elif kind == "none":
            spec.append(None)
            cur.append(1)
            last = "_unsqueeze"
        elif kind == "ellipsis":
            for _ in range(min(len(shape) - used, len(shape) - d)):
                n = shape[d]
                spec.append((0, n, 1))
                cur.append(n)
                d += 1
        elif kind == "bool":
            spec.append(_BOOL)
            indices.append(Tensor._wrap(jnp.zeros((1 if c[1] else 0,), jnp.int64)))
            adv_dims.append(len(cur))
            cur.append(1)
        elif kind == "index":
            t = c[1]
            n = shape[d]
            ordinal = len(indices)
            _check_in_bounds(t._data, n, lambda v, o=ordinal, n=n: IndexError(
                f"index {v} is out of bounds for dimension {o} with size {n}"))
            spec.append(_ARR)
            indices.append(t)
            adv_dims.append(len(cur))
            cur.append(n)
            d += 1
        else:  # mask
            m = c[1]
            if _is_tracer(m._data):
                raise Untraceable(
                    "indexing with a boolean mask gives a shape that depends on the mask's "
                    "values, which cannot be traced: use torch.where(mask, x, other) or "
                    "index with concrete values")
            for i, (ms, xs) in enumerate(zip(m.shape, shape[d:])):
                if ms != xs:
                    raise IndexError(
                        f"The shape of the mask {_sizes(m.shape)} at index {i} does not match "
                        f"the shape of the indexed tensor {_sizes(cur + list(shape[d:]))} at "
                        f"index {len(cur) + i}")
            for a in np.nonzero(np.asarray(m._data).reshape(m.shape)):
                spec.append(_ARR)
                indices.append(Tensor._wrap(jnp.asarray(a, dtype=jnp.int64)))
                adv_dims.append(len(cur))
                cur.append(shape[d])
                d += 1
    cur += shape[d:]
    # trailing full slices change nothing: drop them so equal keys share compiled code
    while spec and isinstance(spec[-1], tuple) and spec[-1] == (0, shape[d - 1], 1):
        spec.pop()
        d -= 1

    out = _Parsed()
    out.spec, out.indices, out.last = tuple(spec), indices, last
    out.advanced = bool(indices)
    tensor_keys = [c[0] for c in items if c[0] in ("index", "mask", "bool")]
    out.single_mask = tensor_keys == ["mask"]
    if indices:
        try:
            bshape = np.broadcast_shapes(*(tuple(t.shape) for t in indices))
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                             "with shapes " + ", ".join(_sizes(t.shape) for t in indices)
                             ) from None
        lo, hi = adv_dims[0], adv_dims[-1]
        rest = [n for i, n in enumerate(cur) if i not in adv_dims]
        if hi - lo + 1 == len(adv_dims):
            out.shape = tuple(cur[:lo]) + bshape + tuple(cur[hi + 1:])
        else:
            out.shape = bshape + tuple(rest)
    else:
        out.shape = tuple(cur)
    return out


def written_view(shape, spec):
    """The view PyTorch's x[key] = v writes through, named as its node (without "Backward0"):
    the last view its basic indexing makes, left to right ("Select" for an int, "Slice" for a
    slice that is not the whole dim, "Unsqueeze" for None and a bool), or None when it writes
    into x itself (whole dims, ellipsis, index tensors). x's own node is named instead in
    PyTorch's error for a write into a view it forbids to modify."""
    name, d = None, 0
    for e in spec:
        if e is None or e == _BOOL:
            name = "Unsqueeze"
            continue
        if type(e) is int:
            name = "Select"
        elif type(e) is tuple and e != (0, shape[d], 1):
            name = "Slice"
        d += 1
    return name
