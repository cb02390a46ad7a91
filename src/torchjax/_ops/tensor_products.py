"""Op-table rows: tensor products and distances (kron, tensordot, cross, cdist) and Vandermonde
matrices."""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

from ._registry import function, op
from .shape import _dim
from .structure import _call, _concrete, _is_tensor, _scalar_name, _tj


@op(tensors=("input", "other"), grad="UnsafeViewBackward0", saves=())
def kron(input, other):
    """The Kronecker product (the smaller-rank input gets leading dims of size 1)."""
    if input.dtype == jnp.bool_:
        return jnp.kron(input.astype(jnp.int8), other.astype(jnp.int8)).astype(jnp.bool_)
    return jnp.kron(input, other)


def _same_dtype(a, b, msg=None):
    if a.dtype != b.dtype:
        raise RuntimeError(msg or f"expected scalar type {_scalar_name(a)} but found "
                           f"{_scalar_name(b)}")


@op(name="tensordot", tensors=("a", "b"), promote="none", function=False, method=False,
    grad="ViewBackward0", saves={"a": ("b",), "b": ("a",)})
def _tensordot(a, b, dims=2):
    """Sum of products over the last `dims` dims of a and the first of b (or listed dims)."""
    _same_dtype(a, b, "both inputs should have same dtype")
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = tuple(range(a.ndim - dims, a.ndim)), tuple(range(dims))
    else:
        da, db = dims
        da = (da,) if isinstance(da, int) else tuple(da)
        db = (db,) if isinstance(db, int) else tuple(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da = tuple(_dim(d, a.ndim) for d in da)
        db = tuple(_dim(d, b.ndim) for d in db)
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in "
                               f"dim {y}")
    return jnp.tensordot(a, b, (da, db), precision=lax.Precision.HIGHEST)


@function(method=False)
def tensordot(a, b, dims=2):
    """Sum of products over the last `dims` dims of a and the first of b (or listed dims)."""
    if _is_tensor(dims):
        v = _concrete(dims, "tensordot's dims").tolist()
        dims = v if isinstance(v, int) else tuple(tuple(x) for x in v)
    elif isinstance(dims, (list, tuple)):
        dims = tuple(tuple(x) if isinstance(x, (list, tuple)) else x for x in dims)
    return _call("tensordot", a, b, dims)


@op(tensors=("input", "other"), promote="none", grad="LinalgCrossBackward0",
    saves={"input": ("other",), "other": ("input",)})
def cross(input, other, dim=None):
    """The 3-D cross product along dim (the first dim of size 3 when dim is None)."""
    _same_dtype(input, other)
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:
        if 3 not in input.shape:
            raise RuntimeError("no dimension of size 3 in input")
        d = input.shape.index(3)
    else:
        d = _dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    a = [lax.index_in_dim(input, i, d) for i in range(3)]
    b = [lax.index_in_dim(other, i, d) for i in range(3)]
    return jnp.concatenate([a[1] * b[2] - a[2] * b[1],
                            a[2] * b[0] - a[0] * b[2],
                            a[0] * b[1] - a[1] * b[0]], axis=d)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def _cdist_norm(diff, p):
    """The p-norm over the last dim, with PyTorch's cdist gradient: 0 wherever a difference
    (and so also a whole distance) is 0, and for p=inf the full gradient to every tie."""
    a = jnp.abs(diff)
    if p == 0:
        return jnp.sum(a != 0, axis=-1).astype(diff.dtype)
    sg = lax.stop_gradient
    if p == math.inf:
        m = sg(jnp.max(a, axis=-1, keepdims=True))
        lin = diff * sg(jnp.sign(diff)) - sg(a)  # value 0, gradient sign(diff)
        return (m + jnp.sum(jnp.where(sg(a) == m, lin, 0), axis=-1, keepdims=True))[..., 0]
    if p == 1:
        return jnp.sum(diff * sg(jnp.sign(diff)), axis=-1)
    zero = a == 0
    if p == 2:
        s = jnp.sum(diff * diff, axis=-1)
    else:
        s = jnp.sum(jnp.where(zero, 0, jnp.where(zero, 1, a) ** p), axis=-1)
    z = s == 0
    return jnp.where(z, 0, jnp.where(z, 1, s) ** (1 / p))


@op(tensors=("x1", "x2"), promote="none", function=True, method=False,
    saves=("x1", "x2", "result"))
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between each row of x1 and each row of x2 (batch dims broadcast)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if not jnp.issubdtype(x1.dtype, jnp.floating):
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{_scalar_name(x1)}")
    _same_dtype(x1, x2)
    if x1.dtype in (jnp.float16, jnp.bfloat16):
        raise NotImplementedError(f"\"cdist\" not implemented for '{_scalar_name(x1)}'")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    return _cdist_norm(diff, float(p))


# -- Vandermonde matrices --------------------------------------------------------------------

def _vander(x, N, increasing):
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = x.astype(jnp.int64)
    # a running product (as PyTorch computes it) keeps the derivative at x = 0 exact
    cols = jnp.broadcast_to(x[:, None], (x.shape[0], max(n - 1, 0)))
    ones = jnp.ones((x.shape[0], min(n, 1)), x.dtype)
    out = jnp.concatenate([ones, jnp.cumprod(cols, axis=1)], axis=1)
    return out if increasing else jnp.flip(out, 1)


# PyTorch names the grad_fn after its last step: a flip, or for increasing=True the write of
# the powers into the result (CopySlices)
@op(name="vander", tensors=("x",), promote="none", function=False, method=False,
    grad="FlipBackward0")
def _vander_decreasing(x, N=None):
    """Columns x^(N-1), ..., x, 1."""
    return _vander(x, N, False)


@op(promote="none", function=False, method=False, grad="CopySlices", tensors=("x",))
def _vander_increasing(x, N=None):
    """Columns 1, x, ..., x^(N-1)."""
    return _vander(x, N, True)


@function(method=False)
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D tensor: powers of x in columns (decreasing by default)."""
    row = "_vander_increasing" if increasing else "vander"
    if (x.shape[0] if N is None and x.ndim == 1 else N) in (0, 1):
        with _tj().no_grad():  # only ones or nothing: PyTorch's result does not require grad
            return _call(row, x, N)
    return _call(row, x, N)
