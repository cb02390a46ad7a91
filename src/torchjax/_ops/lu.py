"""Op-table rows and composites: the LU factorization. torch.linalg.lu_factor /
lu_factor_ex / lu / lu_solve, and PyTorch's older torch.lu / lu_solve / lu_unpack (with their
Tensor methods and once-only deprecation warnings).

The factorization is XLA's partial-pivoting LU (LAPACK's getrf on CPU, as PyTorch's), so the
factors, pivots and signs agree; pivots are LAPACK's 1-based row swaps in int32. Gradients are
JAX's derivatives of the factorization and of the triangular solves (a triangle's gradient
stays in its triangle, as PyTorch's formulas give). The permutation matrix P carries no
gradient (PyTorch returns it without a grad_fn).
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ._registry import function, op
from .torch_linalg import _batch_prefix, _broadcast_batch, _concrete, _mH, _name

_NOT_SQUARE_OK = dict(promote="none", function=False, method=False)


def _check_input(A, fname="torch.lu_factor", kernel="lu_cpu"):
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: Expected tensor with 2 or more dimensions. Got size: "
                           f"[{', '.join(map(str, A.shape))}] instead")
    if not jnp.issubdtype(A.dtype, jnp.inexact) or A.dtype in (jnp.float16, jnp.bfloat16):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_name(A)}'")


def _factor(A):
    """(LU, 1-based int32 pivots, the 0-based row permutation) of A (m x n, batched)."""
    lu, piv, perm = jax.lax.linalg.lu(A)
    return lu, (piv + 1).astype(jnp.int32), perm


def _info(lu):
    """getrf's info: 1 + the index of the first exactly-zero diagonal entry of U, else 0."""
    k = min(lu.shape[-2:])
    zero = jnp.diagonal(jax.lax.stop_gradient(lu), axis1=-2, axis2=-1)[..., :k] == 0
    return jnp.where(zero.any(-1), jnp.argmax(zero, -1) + 1, 0).astype(jnp.int32)


@op(tensors=("A",), namespace="torch.linalg", out_names=("LU", "pivots", "info"),
    grad="LinalgLuFactorExBackward0", saves=("A", "result"), **_NOT_SQUARE_OK)
def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False):
    """LU factorization with partial pivoting: (LU, pivots, info)."""
    _check_input(A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    lu, piv, _ = _factor(A)
    return lu, piv, _info(lu)


def _unpacked(lu, perm):
    """P, L, U with A = P L U from the packed factors and the row permutation."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=lu.dtype)
    U = jnp.triu(lu[..., :k, :])
    P = jnp.swapaxes(jax.nn.one_hot(perm, m, dtype=lu.dtype), -1, -2)
    return jax.lax.stop_gradient(P), L, U


@op(tensors=("A",), namespace="torch.linalg", out_names=("P", "L", "U"),
    grad="LinalgLuBackward0", saves=("result",), **_NOT_SQUARE_OK)
def linalg_lu(A, *, pivot=True):
    """A = P L U: the permutation, the unit lower and the upper triangular factor."""
    _check_input(A, "linalg.lu")
    if not pivot:
        raise RuntimeError("linalg.lu: LU without pivoting is not implemented on the CPU")
    lu, _, perm = _factor(A)
    return _unpacked(lu, perm)


def _perm_of(pivots, m):
    return jax.lax.linalg.lu_pivots_to_permutation(pivots - 1, m)


@op(tensors=("LU_data", "LU_pivots"), out_names=("P", "L", "U"), grad="LuUnpackBackward0",
    saves=(), **_NOT_SQUARE_OK)
def _lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """P, L, U from lu_factor's packed result (empty tensors for the parts not asked)."""
    P, L, U = _unpacked(LU_data, _perm_of(LU_pivots, LU_data.shape[-2]))
    empty = jnp.zeros((0,), LU_data.dtype)
    return (P if unpack_pivots else empty, L if unpack_data else empty,
            U if unpack_data else empty)


def _gather_rows(B, perm):
    return jnp.take_along_axis(B, perm[..., :, None], axis=-2)


def _solve_left(lu, perm, B, adjoint):
    """X with A X = B (or A^H X = B) for A = P L U."""
    tri = jax.lax.linalg.triangular_solve
    if not adjoint:
        Y = tri(lu, _gather_rows(B, perm), left_side=True, lower=True, unit_diagonal=True)
        return tri(lu, Y, left_side=True, lower=False)
    Y = tri(lu, B, left_side=True, lower=False, transpose_a=True, conjugate_a=True)
    Z = tri(lu, Y, left_side=True, lower=True, unit_diagonal=True, transpose_a=True,
            conjugate_a=True)
    return _gather_rows(Z, jnp.argsort(perm, axis=-1))  # P Z


@op(tensors=("LU", "pivots", "B"), namespace="torch.linalg", grad="LinalgLuSolveBackward0",
    saves=("LU", "pivots", "result"), **_NOT_SQUARE_OK)
def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (A X = B's variants: left=False is X A = B, adjoint uses A^H)."""
    n = LU.shape[-1]
    k = B.shape[-2] if left else B.shape[-1]
    if LU.ndim < 2 or B.ndim < 2 or k != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{eq} ({LU.shape[-2]}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if LU.dtype != B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {_name(LU)} and B of type {_name(B)} instead")
    Bt = B if left else _mH(B)
    LUb, Bb = _broadcast_batch(LU, Bt)
    perm = jnp.broadcast_to(_perm_of(pivots, n), LUb.shape[:-1])
    # X A = B is A^H X^H = B^H: the other (adjoint) solve, transposed back
    X = _solve_left(LUb, perm, Bb, adjoint if left else not adjoint)
    return X if left else _mH(X)


# -- the functions: LinAlgError from info, P without gradient, the deprecated forms ----------

def _named(name, fields, values):
    from .._dispatch import _return_type
    return _return_type(name, fields)(*values)


def _raise_singular(info_t, fname):
    """PyTorch's error for a zero pivot (a RuntimeError, not a LinAlgError), read only when
    the values are concrete."""
    if not _concrete(info_t):
        return
    info = np.asarray(info_t._data)
    bad = np.flatnonzero(info.reshape(-1))
    if bad.size:
        k = int(bad[0])
        i = int(info.reshape(-1)[k])
        raise RuntimeError(
            f"{fname}: " + _batch_prefix(info, k) + f"U[{i},{i}] is zero and using it on "
            f"lu_solve would result in a division by zero. If you still want to perform the "
            f"factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
            f"pivot)")


def _call(name, *args, **kwargs):
    from .._dispatch import call_op
    return call_op(name, *args, **kwargs)


def _no_out(out, fname):
    if out is not None:
        raise NotImplementedError(f"{fname}(out=...) is not supported by torchjax: use the "
                                  f"returned tensors")


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots); raises LinAlgError for a singular A, as PyTorch's."""
    _no_out(out, "torch.linalg.lu_factor")
    res = _call("linalg_lu_factor_ex", A, pivot=pivot)
    _raise_singular(res.info, "torch.linalg.lu_factor")
    return _named("linalg_lu_factor", ("LU", "pivots"), res[:2])


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): info is nonzero for a singular A (an error with check_errors)."""
    _no_out(out, "torch.linalg.lu_factor_ex")
    res = _call("linalg_lu_factor_ex", A, pivot=pivot)
    if check_errors:
        _raise_singular(res.info, "torch.linalg.lu_factor_ex")
    return res


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U."""
    _no_out(out, "torch.linalg.lu")
    P, L, U = _call("linalg_lu", A, pivot=pivot)
    return _named("linalg_lu", ("P", "L", "U"), (P.detach(), L, U))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    _no_out(out, "torch.linalg.lu_solve")
    return _call("linalg_lu_solve", LU, pivots, B, left=left, adjoint=adjoint)


_WARNED: set = set()


def _warn_once(key, message):
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=4)


@function(name="lu")
def lu_torch(A, pivot=True, get_infos=False, out=None):
    """Deprecated torch.lu: (LU, pivots), or (LU, pivots, infos) with get_infos."""
    _warn_once("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
                     "torch.linalg.lu_factor_ex and will be removed in a future PyTorch "
                     "release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
                     "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, "
                     "pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be "
                     "replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
                     "compute_pivots)")
    _no_out(out, "torch.lu")
    res = _call("linalg_lu_factor_ex", A, pivot=pivot)
    if get_infos:
        return res.LU, res.pivots, res.info  # a plain tuple, as PyTorch's
    _raise_singular(res.info, "torch.linalg.lu_factor")
    return res.LU, res.pivots


@function(name="lu_solve")
def lu_solve_torch(input, LU_data, LU_pivots, *, out=None):
    """Deprecated torch.lu_solve(b, LU, pivots): torch.linalg.lu_solve(LU, pivots, b)."""
    _warn_once("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand "
                           "will be removed in a future PyTorch release.\nNote that "
                           "torch.linalg.lu_solve has its arguments reversed.\nX = "
                           "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
                           "torch.linalg.lu_solve(LU, pivots, B)")
    _no_out(out, "torch.lu_solve")
    return _call("linalg_lu_solve", LU_data, LU_pivots, input)


@function(name="lu_unpack", method=False)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from torch.linalg.lu_factor's (LU, pivots)."""
    _no_out(out, "torch.lu_unpack")
    P, L, U = _call("_lu_unpack", LU_data, LU_pivots, bool(unpack_data), bool(unpack_pivots))
    return _named("lu_unpack", ("P", "L", "U"), (P.detach(), L, U))
