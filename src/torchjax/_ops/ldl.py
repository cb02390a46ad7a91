"""Op-table rows and composites: torch.linalg.ldl_factor, ldl_factor_ex and ldl_solve, the
LDL^T factorization of symmetric matrices with Bunch-Kaufman pivoting.

XLA has no LAPACK sytrf, so the factorization is written out here as LAPACK's unblocked
algorithm for the lower triangle (the one PyTorch's CPU build reaches): at step k, column k
is kept as a 1x1 pivot, swapped with the row of its largest entry, or paired with it into a
2x2 pivot, by the Bunch-Kaufman tests with alpha = (1 + sqrt(17)) / 8. LD and pivots come out
in LAPACK's format, as PyTorch's: L's columns below a unit diagonal, D's blocks on and next to
the diagonal, pivots 1-based with a 2x2 block's two entries both -(row swapped in). The
solve replays the interchanges and blocks in order.

Real inputs only (complex ones raise by name). PyTorch has no derivatives for them: backward
through a result raises its error.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ._nograd import no_derivative
from ._registry import op
from .special import _not_implemented_for
from .torch_linalg import _name, _need_float, _no_out, _raise_info, _square_float

_ALPHA = (1 + math.sqrt(17)) / 8
_FACTOR_NO_GRAD = no_derivative("derivative for aten::linalg_ldl_factor_ex is not implemented")
_SOLVE_NO_GRAD = no_derivative("derivative for aten::linalg_ldl_solve is not implemented")


def _factor_one(a):
    """(LD, pivots, info) of one symmetric matrix given by its lower triangle."""
    n = a.shape[-1]
    idx = jnp.arange(n)
    a = jnp.tril(a) + jnp.tril(a, -1).T  # the whole symmetric matrix: swaps read both halves

    def step(state):
        k, a, piv, info = state
        below = idx > k
        col = jnp.where(below, jnp.abs(a[:, k]), -1.0)
        imax = jnp.argmax(col)
        colmax = jnp.where(k < n - 1, col[imax], 0.0)
        absakk = jnp.abs(a[k, k])
        # the largest entry of row imax in the trailing matrix, off its diagonal
        rowmax = jnp.max(jnp.where((idx >= k) & (idx != imax), jnp.abs(a[imax]), 0.0))
        zero = jnp.maximum(absakk, colmax) == 0
        # LAPACK's tests, written as it writes them so that near-ties fall the same way
        keep = zero | (absakk >= _ALPHA * colmax) | (
            absakk >= _ALPHA * colmax * (colmax / jnp.where(rowmax == 0, 1.0, rowmax)))
        one = keep | (jnp.abs(a[imax, imax]) >= _ALPHA * rowmax)
        kp = jnp.where(keep, k, imax)
        kstep = jnp.where(one, 1, 2)
        kk = k + kstep - 1
        # swap rows and columns kk and kp of the trailing matrix (L's columns stay)
        order = idx.at[kk].set(kp).at[kp].set(kk)
        trailing = (idx >= k)[:, None] & (idx >= k)[None, :]
        a = jnp.where(trailing, a[order][:, order], a)
        one_step = _eliminate_1x1(a, k, below, zero)
        two_step = _eliminate_2x2(a, k, idx)
        a = jnp.where(kstep == 1, one_step, two_step)
        p = jnp.where(kstep == 1, kp + 1, -(kp + 1)).astype(jnp.int32)
        piv = piv.at[k].set(p)
        k1 = jnp.minimum(k + 1, n - 1)
        piv = piv.at[k1].set(jnp.where(kstep == 2, p, piv[k1]))
        info = jnp.where((info == 0) & zero, k + 1, info)
        return k + kstep, a, piv, info

    state = (jnp.asarray(0), a, jnp.zeros(n, jnp.int32), jnp.asarray(0, jnp.int32))
    _, a, piv, info = jax.lax.while_loop(lambda s: s[0] < n, step, state)
    return jnp.tril(a), piv, info


def _eliminate_1x1(a, k, below, zero):
    d = jnp.where(zero, 1.0, a[k, k])
    x = jnp.where(below, a[:, k], 0.0)
    rows = below[:, None] & below[None, :]
    a = jnp.where(rows, a - (x / d)[:, None] * x[None, :], a)
    return a.at[:, k].set(jnp.where(below, x / d, a[:, k]))


def _eliminate_2x2(a, k, idx):
    n = a.shape[-1]
    k1 = jnp.minimum(k + 1, n - 1)
    below = idx > k + 1
    d21 = a[k1, k]
    d11, d22 = a[k1, k1] / d21, a[k, k] / d21
    scale = 1 / (d11 * d22 - 1) / d21
    ck = jnp.where(below, a[:, k], 0.0)
    ck1 = jnp.where(below, a[:, k1], 0.0)
    wk = scale * (d11 * ck - ck1)
    wk1 = scale * (d22 * ck1 - ck)
    updated = a - ck[:, None] * wk[None, :] - ck1[:, None] * wk1[None, :]
    # LAPACK updates the lower triangle; mirror it so later swaps read the same numbers
    updated = jnp.where(idx[:, None] >= idx[None, :], updated, updated.T)
    rows = below[:, None] & below[None, :]
    a = jnp.where(rows, updated, a)
    a = a.at[:, k].set(jnp.where(below, wk, a[:, k]))
    return a.at[:, k1].set(jnp.where(below, wk1, a[:, k1]))


def _need_real(A, fname):
    if jnp.iscomplexobj(A):
        raise NotImplementedError(f"torchjax: {fname} of complex matrices is not supported "
                                  "(real symmetric matrices only)")


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    out_names=("LD", "pivots", "info"), grad="NotImplemented", needs=(), saves=())
def linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """The LDL^T factorization (Bunch-Kaufman) of symmetric A, with LAPACK's info."""
    if A.dtype in (jnp.float16, jnp.bfloat16):  # PyTorch has no half kernel
        raise _not_implemented_for("ldl_factor_kernel_cpu", A.dtype)
    _square_float(A, "torch.linalg.ldl_factor_ex")
    _need_real(A, "torch.linalg.ldl_factor_ex")
    batch = A.shape[:-2]
    if A.shape[-1] == 0:
        return A, jnp.zeros(batch + (0,), jnp.int32), jnp.zeros(batch, jnp.int32)
    flat = A.reshape((-1,) + A.shape[-2:])
    LD, piv, info = jax.vmap(_factor_one)(jax.lax.stop_gradient(flat))
    LD = _FACTOR_NO_GRAD(LD.reshape(A.shape), A)
    return LD, piv.reshape(batch + A.shape[-1:]), info.reshape(batch)


def _solve_one(LD, piv, B):
    n = LD.shape[-1]
    idx = jnp.arange(n)

    def swap(B, i, j):
        order = idx.at[i].set(j).at[j].set(i)
        return B[order]

    def forward(state):
        k, B = state
        p = piv[k]
        two = p < 0
        kp = jnp.abs(p) - 1
        k1 = jnp.minimum(k + 1, n - 1)
        B = swap(B, jnp.where(two, k1, k), kp)
        below = jnp.where(two, idx > k + 1, idx > k)[:, None]
        B = B - jnp.where(below, LD[:, k][:, None] * B[k][None, :], 0.0)
        B = B - jnp.where(below & two, LD[:, k1][:, None] * B[k1][None, :], 0.0)
        # the 1x1 block divides; the 2x2 block [[d_kk, d_k1k], [d_k1k, d_k1k1]] is solved
        one = B.at[k].set(B[k] / LD[k, k])
        off = LD[k1, k]
        akm1, ak = LD[k, k] / off, LD[k1, k1] / off
        denom = akm1 * ak - 1
        bkm1, bk = B[k] / off, B[k1] / off
        pair = B.at[k].set((ak * bkm1 - bk) / denom).at[k1].set((akm1 * bk - bkm1) / denom)
        return k + jnp.where(two, 2, 1), jnp.where(two, pair, one)

    def backward(state):
        k, B = state  # k: the last row of the block
        two = piv[k] < 0
        below = (idx > k)[:, None]
        B = B.at[k].add(-jnp.sum(jnp.where(below, LD[:, k][:, None] * B, 0.0), 0))
        km1 = jnp.maximum(k - 1, 0)
        B = jnp.where(two, B.at[km1].add(
            -jnp.sum(jnp.where(below, LD[:, km1][:, None] * B, 0.0), 0)), B)
        B = swap(B, k, jnp.abs(piv[k]) - 1)
        return k - jnp.where(two, 2, 1), B

    _, B = jax.lax.while_loop(lambda s: s[0] < n, forward, (jnp.asarray(0), B))
    _, B = jax.lax.while_loop(lambda s: s[0] >= 0, backward, (jnp.asarray(n - 1), B))
    return B


@op(tensors=("LD", "pivots", "B"), promote="none", function=False, method=False,
    namespace="torch.linalg", grad="NotImplemented", needs=(), saves=())
def linalg_ldl_solve(LD, pivots, B, *, hermitian=False):
    """The solution X of A X = B from A's ldl_factor (LD, pivots)."""
    fname = "torch.linalg.ldl_solve"
    if LD.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if B.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(B.ndim, 1)}"
                         f", {max(B.ndim, 1) - 1}], but got -2)")
    _need_float(LD, fname)
    _need_real(LD, fname)
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{fname}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape [{', '.join(map(str, pivots.shape))}] "
                           "instead")
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for {fname}: each A matrix is "
                           f"{LD.shape[-2]} by {LD.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    if LD.dtype != B.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_name(B)} and A of type {_name(LD)} instead.")
    batch = jnp.broadcast_shapes(LD.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    n = LD.shape[-1]
    LDb = jnp.broadcast_to(LD, batch + LD.shape[-2:]).reshape((-1, n, n))
    pb = jnp.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape((-1, n))
    pb = pb.astype(jnp.int32)
    Bb = jnp.broadcast_to(B, batch + B.shape[-2:]).reshape((-1,) + B.shape[-2:])
    X = jax.vmap(_solve_one)(jax.lax.stop_gradient(LDb), pb, jax.lax.stop_gradient(Bb))
    return _SOLVE_NO_GRAD(X.reshape(batch + B.shape[-2:]), LD, B)


def ldl_factor(A, *, hermitian=False, out=None):
    """LD and pivots of the LDL^T factorization of symmetric A (see ldl_factor_ex)."""
    from .._dispatch import _return_type, call_op
    _no_out(out)
    res = call_op("linalg_ldl_factor_ex", A, hermitian=hermitian)
    _check_info(res.info, "torch.linalg.ldl_factor")
    return _return_type("linalg_ldl_factor", ("LD", "pivots"))(res.LD, res.pivots)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """LD, pivots and LAPACK's info; raises for a singular A only when check_errors."""
    from .._dispatch import call_op
    _no_out(out)
    res = call_op("linalg_ldl_factor_ex", A, hermitian=hermitian)
    if check_errors:
        _check_info(res.info, "torch.linalg.ldl_factor_ex")
    return res


def _check_info(info, fname):
    # PyTorch reports a zero pivot of D (info > 0) through an internal assert, a
    # RuntimeError whose key phrase is the code
    _raise_info(info, fname, lambda i: f"Unknown error code: {i}.", RuntimeError)
