"""Op-table rows: torch.linalg's vector, matrix and general norms, and the condition number
built on the matrix norms."""

from __future__ import annotations

import math

import jax.numpy as jnp

from .. import _dtypes
from ._registry import op
from .reduction import _abs, _dims, _vector_norm
from .torch_linalg import _name, _need_float, _need_matrix, _need_square


def _norm_input(x, dtype, fname):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {_name(x)}")
    if dtype is not None:
        if jnp.promote_types(x.dtype, dtype.np) != jnp.dtype(dtype.np):
            raise RuntimeError(f"{fname}: the dtype of the input ({_name(x)}) should be "
                               "convertible without narrowing to the specified dtype "
                               f"({_dtypes.SCALAR_NAMES[dtype.name]})")
        x = x.astype(dtype.np)
    return x


def _vnorm(x, ord, dim, keepdim):
    if isinstance(ord, (bool, str)) or not isinstance(ord, (int, float)):
        raise RuntimeError(f"linalg.vector_norm: Expected a number for ord, got {ord!r}")
    return _vector_norm(x, ord, _dims(dim, x.ndim), keepdim)


@op(tensors=("x",), promote="none", function=False, method=False, namespace="torch.linalg",
    grad="LinalgVectorNormBackward0", saves=("x", "result"))
def linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """Vector ord-norm over dim (all elements by default)."""
    x = _norm_input(x, dtype, "linalg.vector_norm")
    return _vnorm(x, ord, dim, keepdim)


_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _mnorm(A, ord, dim, keepdim, fname="linalg.matrix_norm"):
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if isinstance(dim, int) or len(dim) != 2:
        raise RuntimeError(f"{fname}: dim must be a 2-tuple. Got "
                           f"{dim if isinstance(dim, int) else ' '.join(map(str, dim))}")
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        if isinstance(ord, str):
            raise RuntimeError(f"{fname}: Order {ord} not supported.")
        raise RuntimeError(f"{fname}: Order {ord:g} not supported.")
    d0, d1 = _dims(dim, A.ndim)
    if d0 == d1:
        raise RuntimeError(f"{fname}: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return _vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        m = jnp.moveaxis(A, (d0, d1), (-2, -1))
        s = jnp.linalg.svd(m, compute_uv=False)
        r = jnp.sum(s, -1) if ord == "nuc" else jnp.max(s, -1) if ord == 2 else jnp.min(s, -1)
        return jnp.expand_dims(r, tuple(sorted((d0, d1)))) if keepdim else r
    # 1: largest column sum of |A|; inf: largest row sum
    over, across = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = jnp.sum(_abs(A), axis=over, keepdims=True)
    r = jnp.max(sums, axis=across, keepdims=True) if ord > 0 else \
        jnp.min(sums, axis=across, keepdims=True)
    return r if keepdim else jnp.squeeze(r, (d0, d1))


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    grad="LinalgVectorNormBackward0", saves=("A", "result"))
def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norm: 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2, over the two dims."""
    A = _norm_input(A, dtype, "linalg.matrix_norm")
    return _mnorm(A, ord, tuple(dim) if not isinstance(dim, int) else dim, keepdim)


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    grad="LinalgVectorNormBackward0", saves=("A", "result"))
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """Vector or matrix norm, chosen from ord and dim as torch.linalg.norm does."""
    A = _norm_input(A, dtype, "linalg.norm")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) == 2:
            return _mnorm(A, "fro" if ord is None else ord, dim, keepdim)
        if ord is None:
            return _vnorm(A, 2, dim, keepdim)
        return _vnorm(A, ord, dim, keepdim)
    if ord is None:
        return _vnorm(A, 2, None, keepdim)
    if A.ndim == 2:
        return _mnorm(A, ord, (-2, -1), keepdim)
    if A.ndim == 1:
        return _vnorm(A, ord, None, keepdim)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D "
                       f"or 2D. Got {A.ndim}D.")


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    grad="SqueezeBackward1", saves=())
def linalg_cond(A, p=None):
    """Condition number in the p-norm (2-norm by default)."""
    _need_matrix(A, "linalg.cond")
    _need_float(A, "linalg.cond")
    if p is None or p in (2, -2):
        s = jnp.linalg.svd(A, compute_uv=False)
        smax, smin = jnp.max(s, -1), jnp.min(s, -1)
        return smin / smax if p == -2 else smax / smin
    if p not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    _need_square(A, "linalg.cond")
    r = _mnorm(A, p, (-2, -1), False) * _mnorm(jnp.linalg.inv(A), p, (-2, -1), False)
    # PyTorch reports inf for singular inputs (its inverse gives inf/nan there)
    return jnp.nan_to_num(r, nan=jnp.inf)

