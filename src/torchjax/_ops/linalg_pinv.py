"""Op-table rows: the pseudo-inverse, least squares and the numerical rank, which all cut
the singular values at PyTorch's tolerances."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._registry import op
from .torch_linalg import (
    _broadcast_batch,
    _hermitian_from,
    _mH,
    _name,
    _need_float,
    _need_matrix,
    _real_dtype,
)


def _pinv_impl(A, atol, rtol, hermitian):
    if hermitian:
        w, V = jnp.linalg.eigh(A, symmetrize_input=False)
        s = jnp.abs(w)
        cutoff = jnp.maximum(atol, rtol * jnp.max(s, -1, keepdims=True))
        winv = jnp.where(s > cutoff, 1 / jnp.where(s > cutoff, w, 1), 0)
        return (V * winv[..., None, :].astype(V.dtype)) @ _mH(V)
    U, s, Vh = jnp.linalg.svd(A, full_matrices=False)
    cutoff = jnp.maximum(atol, rtol * jnp.max(s, -1, keepdims=True, initial=0))
    sinv = jnp.where(s > cutoff, 1 / jnp.where(s > cutoff, s, 1), 0)
    return (_mH(Vh) * sinv[..., None, :].astype(U.dtype)) @ _mH(U)


_pinv_core = jax.custom_jvp(_pinv_impl, nondiff_argnums=(3,))


@_pinv_core.defjvp
def _pinv_jvp(hermitian, primals, tangents):
    # the derivative of the pseudo-inverse at constant rank (Golub & Pereyra), which is what
    # PyTorch's pinv backward implements
    A, atol, rtol = primals
    dA = tangents[0]
    P = _pinv_impl(A, atol, rtol, hermitian)
    m, n = A.shape[-2:]
    PH = _mH(P)
    dP = (-P @ dA @ P
          + (P @ PH) @ _mH(dA) @ (jnp.eye(m, dtype=A.dtype) - A @ P)
          + (jnp.eye(n, dtype=A.dtype) - P @ A) @ _mH(dA) @ (PH @ P))
    return P, dP
def _tolerances(A, atol, rtol):
    """PyTorch's defaults: rtol = eps * max(m, n) when neither is given, else 0 if omitted."""
    real = _real_dtype(A)
    if rtol is None:
        rtol = (jnp.finfo(real).eps * max(A.shape[-2:])) if atol is None else 0.0
    if atol is None:
        atol = 0.0
    atol = jnp.asarray(atol, real)
    rtol = jnp.asarray(rtol, real)
    # tensor tolerances broadcast against the batch dims
    return atol[..., None] if atol.ndim else atol, rtol[..., None] if rtol.ndim else rtol


def _pinv(A, atol, rtol, hermitian, fname):
    if A.ndim < 2 or not jnp.issubdtype(A.dtype, jnp.inexact):
        cls = {"float32": "Float", "float64": "Double"}.get(jnp.dtype(A.dtype).name,
                                                            _name(A))
        raise RuntimeError(f"{fname}({cls}{{{list(A.shape)}}}): expected a tensor with 2 or "
                           "more dimensions of float, double, cfloat or cdouble types")
    if A.shape[-1] == 0 or A.shape[-2] == 0:
        return jnp.zeros(A.shape[:-2] + (A.shape[-1], A.shape[-2]), A.dtype)
    atol, rtol = _tolerances(A, atol, rtol)
    if hermitian:
        A = _hermitian_from(A, False)
    return _pinv_core(A, atol, rtol, hermitian)


@op(tensors=("A", "atol", "rtol"), promote="none", function=False, method=False,
    namespace="torch.linalg", grad="LinalgPinvBackward0", needs=("A",), saves=("A", "result"), residuals=True)
def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse, dropping singular values below max(atol, rtol * s_max)."""
    return _pinv(A, atol, rtol, hermitian, "linalg.pinv")


@op(promote="none", grad="LinalgPinvBackward0", saves=("input", "result"), residuals=True)
def pinverse(input, rcond=1e-15):
    """Moore-Penrose pseudo-inverse (torch.linalg.pinv with rtol=rcond)."""
    return _pinv(input, None, rcond, False, "linalg.pinv")


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@op(tensors=("A", "B"), promote="none", function=False, method=False, namespace="torch.linalg",
    out_names=("solution", "residuals", "rank", "singular_values"), grad="LinalgLstsqBackward0",
    saves=("A", "B", "result"), residuals=True)
def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of A X = B (the default CPU driver 'gelsy' and 'gels')."""
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    if driver in ("gelsd", "gelss"):
        raise NotImplementedError(f"torchjax.linalg.lstsq: driver={driver!r} is not supported "
                                  "(its residuals depend on the rank); use 'gelsy' or 'gels'")
    _need_float(A, "torch.linalg.lstsq")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_name(A)} and other's dtype "
                           f"{_name(B)}")
    if not (A.ndim >= B.ndim and A.ndim - B.ndim <= 1):
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    vec = B.ndim == A.ndim - 1
    Bm = B[..., None] if vec else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    Ab, Bb = _broadcast_batch(A, Bm)
    m, n = A.shape[-2:]
    real = _real_dtype(A)
    rc = jnp.finfo(real).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    X = _pinv(Ab, None, rc, False, "torch.linalg.lstsq") @ Bb
    residuals = jnp.zeros((0,), A.dtype)
    if driver == "gels" and m > n:
        # gels assumes full rank and reports the squared residual norms of each column
        residuals = jnp.sum(jnp.abs(Ab @ X - Bb) ** 2, -2).astype(A.dtype)
    if vec:
        X = X[..., 0]
    if driver == "gels":
        rank = jnp.zeros((0,), jnp.int64)
    else:
        # gelsy's numerical rank (from its pivoted QR); singular values agree on the common case
        s = jax.lax.stop_gradient(jnp.linalg.svd(Ab, compute_uv=False))
        tol = rc * jnp.max(s, -1, keepdims=True, initial=0)
        rank = jnp.sum(s > tol, -1).astype(jnp.int64)
    return X, residuals, rank, jnp.zeros((0,), real)


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution (solution, residuals, rank, singular_values) like PyTorch's CPU
    drivers 'gelsy' (the default) and 'gels'."""
    from .._dispatch import call_op
    res = call_op("linalg_lstsq", A, B, rcond, driver=driver)
    # PyTorch's empty singular_values carry no autograd history
    return res._replace(singular_values=res.singular_values.detach())


@op(tensors=("A", "atol", "rtol"), promote="none", function=False, method=False,
    namespace="torch.linalg", differentiable=False)
def linalg_matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """Numerical rank: the singular values above max(atol, rtol * s_max)."""
    _need_matrix(A, "torch.linalg.matrix_rank")
    _need_float(A, "torch.linalg.matrix_rank")
    if A.shape[-1] == 0 or A.shape[-2] == 0:
        return jnp.zeros(A.shape[:-2], jnp.int64)
    atol, rtol = _tolerances(A, atol, rtol)
    if hermitian:
        s = jnp.abs(jnp.linalg.eigvalsh(_hermitian_from(A, False), symmetrize_input=False))
    else:
        s = jnp.linalg.svd(A, compute_uv=False)
    tol = jnp.maximum(atol, rtol * jnp.max(s, -1, keepdims=True))
    return jnp.sum(s > tol, -1).astype(jnp.int64)
