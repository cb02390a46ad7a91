"""Op-table rows: the torch.linalg rows that report LAPACK's info (inverse, solve, Cholesky)
and the determinant, with the checks and helpers every linear algebra module shares.

The other torch.linalg rows live beside this file: linalg_factorizations (QR, SVD, eigh),
linalg_norms, linalg_pinv (pinv, lstsq, matrix_rank) and linalg_products.

Decompositions run on XLA's LAPACK-backed kernels, the same routines PyTorch calls on CPU, so
factors come out with the same signs. Errors PyTorch reports from LAPACK's `info` (a singular
matrix, a matrix that is not positive-definite) depend on values: the *_ex rows compute `info`
inside the compiled op, and the checking functions (inv, cholesky, solve) read it only when
the values are concrete (not under jax tracing).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes
from ._registry import function, op


class LinAlgError(RuntimeError):
    """Raised by torchjax.linalg functions for singular or non-positive-definite inputs."""


LinAlgError.__module__ = "torch.linalg"


def _name(x):
    return _dtypes.SCALAR_NAMES.get(jnp.dtype(x.dtype).name, str(x.dtype))


def _need_float(A, fname):
    dt = jnp.dtype(A.dtype)
    if not jnp.issubdtype(dt, jnp.inexact):
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {_name(A)}")
    if dt in (jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16)):
        raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got {_name(A)}")


def _need_matrix(A, fname, arg="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor {arg} must have at least 2 dimensions.")


def _need_square(A, fname, arg="A"):
    _need_matrix(A, fname, arg)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fname}: {arg} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _square_float(A, fname):
    _need_square(A, fname)
    _need_float(A, fname)


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def _mH(x):
    return jnp.conj(_mT(x)) if jnp.iscomplexobj(x) else _mT(x)


def _lu_info(A):
    """LAPACK getrf's info: 1 + the index of the first exactly-zero pivot of U, else 0."""
    if A.shape[-1] == 0:
        return jnp.zeros(A.shape[:-2], jnp.int32)
    lu, _, _ = jax.lax.linalg.lu(jax.lax.stop_gradient(A))
    zero = jnp.diagonal(lu, axis1=-2, axis2=-1) == 0
    return jnp.where(zero.any(-1), jnp.argmax(zero, -1) + 1, 0).astype(jnp.int32)


def _hermitian_from(A, upper):
    """The Hermitian matrix LAPACK reads from one triangle of A, with the derivative of the
    symmetrised input, as PyTorch's backward formulas give (their gradients are Hermitian)."""
    if upper:
        tri = jnp.triu(A)
        full = tri + _mH(jnp.triu(A, 1))
    else:
        tri = jnp.tril(A)
        full = tri + _mH(jnp.tril(A, -1))
    if jnp.iscomplexobj(A):  # LAPACK ignores the imaginary part of the diagonal
        d = jnp.imag(jnp.diagonal(full, axis1=-2, axis2=-1))
        full = full - 1j * jnp.eye(A.shape[-1], dtype=A.dtype) * d[..., None, :]
    sym = (A + _mH(A)) / 2
    return sym + jax.lax.stop_gradient(full - sym)

def _real_dtype(x):
    return jnp.finfo(x.dtype).dtype


# -- inverse, determinant -------------------------------------------------------------------

@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    out_names=("inverse", "info"), grad="LinalgInvExBackward0", saves=("result",), residuals=True)
def linalg_inv_ex(A, *, check_errors=False):
    """Inverse of square matrices, with LAPACK's info (nonzero for a singular matrix)."""
    _square_float(A, "linalg.inv")
    return jnp.linalg.inv(A), _lu_info(A)


def _batch_prefix(info, k):
    return f"(Batch element {k}): " if info.ndim else ""


def _concrete(t):
    return not isinstance(t._data, jax.core.Tracer)


def _raise_info(info_t, fname, message, error=LinAlgError):
    """Raise error (LinAlgError) when a concrete info tensor is nonzero (message(first
    nonzero info))."""
    if not _concrete(info_t):
        return
    info = np.asarray(info_t._data)
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size:
        k = int(bad[0])
        raise error(f"{fname}: " + _batch_prefix(info, k) + message(int(flat[k])))


def _singular_inv(i):
    return (f"The diagonal element {i} is zero, the inversion could not be completed because "
            "the input matrix is singular.")


def _checked_inv(A, fname):
    from .._dispatch import call_op
    res = call_op("linalg_inv_ex", A)
    _raise_info(res.info, fname, _singular_inv)
    return res


def inv(A, *, out=None):
    """Inverse of square matrices; raises LinAlgError for a singular matrix."""
    _no_out(out)
    return _checked_inv(A, "linalg.inv").inverse


def inv_ex(A, *, check_errors=False, out=None):
    """Inverse of square matrices and LAPACK's info; raises only when check_errors."""
    from .._dispatch import call_op
    _no_out(out)
    if check_errors:
        return _checked_inv(A, "linalg.inv_ex")
    return call_op("linalg_inv_ex", A)


def _no_out(out):
    if out is not None:
        raise NotImplementedError("torchjax.linalg: the out= argument is not supported here")


@function(name="inverse")
def inverse(input, *, out=None):
    """Inverse of square matrices (torch.linalg.inv)."""
    _no_out(out)
    return _checked_inv(input, "linalg.inv").inverse


@jax.custom_jvp
def _det_core(A):
    return jnp.linalg.det(A)


@_det_core.defjvp
def _det_jvp(primals, tangents):
    # det(A) tr(A^-1 dA), and 0 where det(A) == 0: PyTorch's backward gives a zero gradient
    # at exactly singular matrices (the cofactors would not be zero)
    (A,), (dA,) = primals, tangents
    d = _det_core(A)
    singular = (d == 0)[..., None, None]
    safe = jnp.where(singular, jnp.eye(A.shape[-1], dtype=A.dtype), A)
    t = jnp.trace(jnp.linalg.solve(safe, jnp.where(singular, 0, dA)), axis1=-2, axis2=-1)
    return d, d * t


def _det(A, fname):
    _square_float(A, fname)
    if A.shape[-1] == 0:
        return jnp.ones(A.shape[:-2], A.dtype)
    return _det_core(A)


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    grad="LinalgDetBackward0", saves=("A", "result"), residuals=True)
def linalg_det(A):
    """Determinant of square matrices."""
    return _det(A, "linalg.det")


@op(promote="none", grad="LinalgDetBackward0", saves=("input", "result"), residuals=True)
def det(input):
    """Determinant of square matrices (torch.linalg.det)."""
    return _det(input, "linalg.det")


def _slogdet(A, fname):
    _square_float(A, fname)
    if A.shape[-1] == 0:
        return jnp.ones(A.shape[:-2], A.dtype), jnp.zeros(A.shape[:-2], _real_dtype(A))
    return tuple(jnp.linalg.slogdet(A))


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    out_names=("sign", "logabsdet"), grad="LinalgSlogdetBackward0", saves=("A", "result"), residuals=True)
def linalg_slogdet(A):
    """Sign and log of the absolute value of the determinant."""
    return _slogdet(A, "linalg.slogdet")


@op(promote="none", out_names=("sign", "logabsdet"), grad="LinalgSlogdetBackward0",
    saves=("input", "result"), residuals=True)
def slogdet(input):
    """Sign and log of the absolute value of the determinant (torch.linalg.slogdet)."""
    return _slogdet(input, "linalg.slogdet")


@op(promote="none", grad="WhereBackward0", residuals=True)
def logdet(input):
    """Log of the determinant: nan for a negative determinant, -inf for zero."""
    sign, logabs = _slogdet(input, "logdet")
    return jnp.where(sign < 0, jnp.nan, logabs)


# -- solve ----------------------------------------------------------------------------------

def _vector_rhs(A, B):
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


def _broadcast_batch(A, B):
    batch = jnp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    return (jnp.broadcast_to(A, batch + A.shape[-2:]), jnp.broadcast_to(B, batch + B.shape[-2:]))


@op(tensors=("A", "B"), promote="none", function=False, method=False, namespace="torch.linalg",
    out_names=("result", "info"), grad="LinalgSolveExBackward0", saves=("A", "result"), residuals=True)
def linalg_solve_ex(A, B, *, left=True, check_errors=False):
    """Solution X of A X = B (left) or X A = B, with LAPACK's info."""
    _square_float(A, "linalg.solve")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {_name(A)} and B of type {_name(B)} instead")
    vec = _vector_rhs(A, B)
    Bm = B[..., None] if vec else B
    n = A.shape[-1]
    if (Bm.shape[-2] if left else Bm.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{Bm.shape[-2]}x{Bm.shape[-1]})")
    if vec and not left:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not "
                           "supported for left=False. In this case linalg.solve is equivalent "
                           "to B / A.squeeze(-1)")
    if left:
        X = jnp.linalg.solve(*_broadcast_batch(A, Bm))
    else:
        X = _mT(jnp.linalg.solve(*_broadcast_batch(_mT(A), _mT(Bm))))
    if vec:
        X = X[..., 0]
    return X, _lu_info(A)


def _solve(A, B, left, fname):
    from .._dispatch import call_op
    res = call_op("linalg_solve_ex", A, B, left=left)
    _raise_info(res.info, fname,
                lambda i: "The solver failed because the input matrix is singular.")
    return res


def solve(A, B, *, left=True, out=None):
    """Solution X of A X = B (or X A = B with left=False); raises for a singular A."""
    _no_out(out)
    return _solve(A, B, left, "torch.linalg.solve").result


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """Solution of A X = B and LAPACK's info; raises only when check_errors."""
    from .._dispatch import call_op
    _no_out(out)
    if check_errors:
        return _solve(A, B, left, "torch.linalg.solve_ex")
    return call_op("linalg_solve_ex", A, B, left=left)


# -- Cholesky -------------------------------------------------------------------------------

def _cholesky_info(a):
    """LAPACK potrf's info for each matrix: the order of the first leading minor that is not
    positive-definite (0 if none), by an unblocked factorisation of the lower triangle."""
    n = a.shape[-1]
    idx = jnp.arange(n)

    def body(j, state):
        L, info = state
        before = idx < j
        Lj = jnp.where(before, L[..., j, :], 0)
        d = jnp.real(a[..., j, j]) - jnp.sum(jnp.abs(Lj) ** 2, -1)
        bad = ~(d > 0)
        info = jnp.where((info == 0) & bad, j + 1, info)
        dj = jnp.sqrt(jnp.where(bad, 1, d)).astype(a.dtype)
        prod = jnp.einsum("...ik,...k->...i", jnp.where(before, L, 0), jnp.conj(Lj))
        col = (a[..., :, j] - prod) / dj[..., None]
        col = jnp.where(idx > j, col, jnp.where(idx == j, dj[..., None], 0))
        return L.at[..., :, j].set(col), info

    L0 = jnp.zeros_like(a)
    info0 = jnp.zeros(a.shape[:-2], jnp.int32)
    return jax.lax.fori_loop(0, n, body, (L0, info0))[1]


def _cholesky(A, upper, fname):
    _square_float(A, fname)
    H = _hermitian_from(A, upper)
    L = jnp.linalg.cholesky(H)
    failed = jnp.isnan(L).any()
    Hs = jax.lax.stop_gradient(H)
    info = jax.lax.cond(failed, _cholesky_info, lambda h: jnp.zeros(h.shape[:-2], jnp.int32),
                        Hs)
    # PyTorch leaves the failed factor as LAPACK wrote it; zero it so no NaN escapes unseen
    L = jnp.where(jnp.isnan(L), 0, L)
    return (_mH(L) if upper else L), info


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    out_names=("L", "info"), grad="LinalgCholeskyExBackward0", saves=("result",), residuals=True)
def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    """Cholesky factor of Hermitian positive-definite matrices, with LAPACK's info."""
    return _cholesky(A, upper, "linalg.cholesky")


def _check_cholesky(res, fname):
    _raise_info(res.info, fname, lambda i: (
        "The factorization could not be completed because the input is not positive-definite "
        f"(the leading minor of order {i} is not positive-definite)."))
    return res


def cholesky(A, *, upper=False, out=None):
    """Cholesky factor of Hermitian positive-definite matrices; raises when not PD."""
    from .._dispatch import call_op
    _no_out(out)
    return _check_cholesky(call_op("linalg_cholesky_ex", A, upper=upper), "linalg.cholesky").L


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """Cholesky factor and LAPACK's info; raises only when check_errors."""
    from .._dispatch import call_op
    _no_out(out)
    res = call_op("linalg_cholesky_ex", A, upper=upper)
    return _check_cholesky(res, "linalg.cholesky_ex") if check_errors else res


@op(promote="none", function=False, method=False, out_names=("L", "info"),
    grad="CholeskyBackward0", saves=("result",), residuals=True)
def _cholesky_torch(input, upper=False):
    """torch.cholesky's factor and info."""
    return _cholesky(input, upper, "cholesky")


@function(name="cholesky")
def cholesky_torch(input, upper=False, *, out=None):
    """Cholesky factor (deprecated torch.cholesky; prefer torch.linalg.cholesky)."""
    from .._dispatch import call_op
    _no_out(out)
    return _check_cholesky(call_op("_cholesky_torch", input, upper), "cholesky").L

