"""Op-table rows: torch.linalg rows and the torch.* linear algebra built on them.

Decompositions run on XLA's LAPACK-backed kernels, the same routines PyTorch calls on CPU, so
factors come out with the same signs. Errors PyTorch reports from LAPACK's `info` (a singular
matrix, a matrix that is not positive-definite) depend on values: the *_ex rows compute `info`
inside the compiled op, and the checking functions (inv, cholesky, solve) read it only when
the values are concrete (not under jax tracing).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes
from ._registry import function, op
from .linalg import _add_scaled, _check_mv, _same_dtype_bmm
from .reduction import _abs, _dims, _vector_norm


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


def _raise_info(info_t, fname, message):
    """Raise LinAlgError when a concrete info tensor is nonzero (message(first nonzero info))."""
    if not _concrete(info_t):
        return
    info = np.asarray(info_t._data)
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size:
        k = int(bad[0])
        raise LinAlgError(f"{fname}: " + _batch_prefix(info, k) + message(int(flat[k])))


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


# -- QR, SVD, eigh --------------------------------------------------------------------------

def _qr(A, mode, fname):
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _need_matrix(A, fname)
    _need_float(A, fname)
    m, n = A.shape[-2:]
    if m < n and mode != "complete":
        # the reflectors only depend on the first m columns: factor that square block (JAX
        # differentiates it) and carry the remaining columns through Q^H
        Q, R1 = jnp.linalg.qr(A[..., :m])
        R = jnp.concatenate([R1, _mH(Q) @ A[..., m:]], axis=-1)
    else:
        Q, R = jnp.linalg.qr(A, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        return jnp.zeros((0,), A.dtype), R
    return Q, R


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    out_names=("Q", "R"), grad="LinalgQrBackward0", saves=("result",), residuals=True)
def linalg_qr(A, mode="reduced"):
    """QR decomposition: A = Q R with Q orthonormal columns and R upper triangular."""
    return _qr(A, mode, "linalg.qr")


@op(promote="none", out_names=("Q", "R"), grad="LinalgQrBackward0", saves=("result",), residuals=True)
def qr(input, some=True):
    """QR decomposition (deprecated torch.qr; prefer torch.linalg.qr)."""
    return _qr(input, "reduced" if some else "complete", "linalg.qr")


def _svd(A, full_matrices, fname):
    _need_matrix(A, fname)
    _need_float(A, fname)
    m, n = A.shape[-2:]
    k = min(m, n)
    U, S, Vh = jnp.linalg.svd(A, full_matrices=False)
    if full_matrices and m != n:
        # PyTorch differentiates only the first min(m, n) singular vectors; the completion of
        # the basis carries no gradient
        Uf, _, Vhf = jnp.linalg.svd(jax.lax.stop_gradient(A), full_matrices=True)
        U = jnp.concatenate([U, Uf[..., k:]], axis=-1)
        Vh = jnp.concatenate([Vh, Vhf[..., k:, :]], axis=-2)
    return U, S, Vh


def _no_driver(driver, fname):
    if driver is not None:
        raise RuntimeError(f"{fname}: keyword argument `driver=` is only supported on CUDA "
                           "inputs with cuSOLVER backend.")


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    out_names=("U", "S", "Vh"), grad="LinalgSvdBackward0", saves=("result",), residuals=True)
def linalg_svd(A, full_matrices=True, *, driver=None):
    """Singular value decomposition A = U diag(S) Vh."""
    _no_driver(driver, "torch.linalg.svd")
    return _svd(A, full_matrices, "linalg.svd")


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    grad="LinalgSvdBackward0", saves=("result",), residuals=True)
def linalg_svdvals(A, *, driver=None):
    """Singular values, in descending order."""
    _no_driver(driver, "torch.linalg.svdvals")
    _need_matrix(A, "linalg.svd")
    _need_float(A, "linalg.svd")
    return jnp.linalg.svd(A, compute_uv=False)


@op(promote="none", function=False, method=False, out_names=("U", "S", "V"),
    grad="LinalgSvdBackward0", saves=("result",), residuals=True)
def _svd_torch(input, some=True):
    """torch.svd with compute_uv: U, S and V (not Vh)."""
    U, S, Vh = _svd(input, not some, "linalg.svd")
    return U, S, _mH(Vh)


@function(name="svd")
def svd(input, some=True, compute_uv=True, *, out=None):
    """Singular value decomposition returning (U, S, V) with A = U diag(S) V^H."""
    from .._dispatch import _return_type, call_op
    _no_out(out)
    cls = _return_type("svd", ("U", "S", "V"))
    if compute_uv:
        return cls(*call_op("_svd_torch", input, some))
    from .. import zeros
    S = call_op("linalg_svdvals", input)
    m, n = input.shape[-2:]
    batch = tuple(input.shape[:-2])
    return cls(zeros(*batch, m, m, dtype=input.dtype), S, zeros(*batch, n, n, dtype=input.dtype))


def _eigh(A, UPLO, fname):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _square_float(A, fname)
    w, V = jnp.linalg.eigh(_hermitian_from(A, UPLO == "U"), symmetrize_input=False)
    return w, V


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    out_names=("eigenvalues", "eigenvectors"), grad="LinalgEighBackward0",
    saves=("A", "result"), residuals=True)
def linalg_eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices."""
    return _eigh(A, UPLO, "linalg.eigh")


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    grad="LinalgEighBackward0", saves=("A", "result"), residuals=True)
def linalg_eigvalsh(A, UPLO="L"):
    """Eigenvalues (ascending) of Hermitian matrices."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _square_float(A, "linalg.eigvalsh")
    return jnp.linalg.eigvalsh(_hermitian_from(A, UPLO == "U"), symmetrize_input=False)


# -- norms ----------------------------------------------------------------------------------

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


# -- pseudo-inverse, least squares, rank, condition number ----------------------------------

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


def _real_dtype(x):
    return jnp.finfo(x.dtype).dtype


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


# -- products and powers --------------------------------------------------------------------

def _matrix_power(A, n, fname):
    _need_square(A, fname)
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"{fname}(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        _need_float(A, "linalg.inv")
        A = jnp.linalg.inv(A)
        n = -n
    if n == 0:
        return jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    result = None
    base = A
    while n:  # binary powering, low bits first, as PyTorch does
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    grad="MmBackward0")
def linalg_matrix_power(A, n):
    """A to the integer power n (negative n inverts A first)."""
    return _matrix_power(A, n, "linalg.matrix_power")


@op(promote="none", grad="MmBackward0")
def matrix_power(input, n):
    """input to the integer power n (torch.linalg.matrix_power)."""
    return _matrix_power(input, n, "linalg.matrix_power")


def _matrix_exp(A):
    _square_float(A, "linalg.matrix_exp")
    if A.shape[-1] == 0:
        return A
    return jax.scipy.linalg.expm(A)


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    grad="LinalgMatrixExpBackward0")
def linalg_matrix_exp(A):
    """Matrix exponential of square matrices."""
    return _matrix_exp(A)


@op(promote="none", grad="LinalgMatrixExpBackward0")
def matrix_exp(input):
    """Matrix exponential of square matrices (torch.linalg.matrix_exp)."""
    return _matrix_exp(input)


def _multi_dot(tensors, fname):
    if len(tensors) < 2:
        raise RuntimeError(f"{fname}(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"{fname}(): the first tensor must be 1D or 2D but got "
                           f"{first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"{fname}(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"{fname}(): tensor {i} must be 2D but got {t.ndim}D")
    for i, t in enumerate(tensors):
        if t.dtype != first.dtype:
            raise RuntimeError(f"{fname}(): all tensors must have be the same dtype but tensor "
                               f"0 is {_name(first)} and tensor {i} {_name(t)}")
    mats = [first[None, :] if first.ndim == 1 else first, *tensors[1:-1],
            last[:, None] if last.ndim == 1 else last]
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"{fname}(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    out = jnp.linalg.multi_dot(mats)
    if first.ndim == 1:
        out = out[0]
    if last.ndim == 1:
        out = out[..., 0]
    return out


@op(tensors=(), tensor_list="tensors", promote="none", function=False, method=False,
    namespace="torch.linalg", grad="ViewBackward0")
def linalg_multi_dot(tensors):
    """Product of a chain of matrices, multiplied in the cheapest order."""
    return _multi_dot(tuple(tensors), "multi_dot")


@op(tensors=(), tensor_list="matrices", promote="none", function=False, method=False,
    grad="ViewBackward0")
def _chain_matmul(matrices):
    """Product of 2-D matrices (torch.chain_matmul)."""
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0]
    return _multi_dot(tuple(matrices), "multi_dot")


@function(name="chain_matmul", method=False)
def chain_matmul(*matrices, out=None):
    """Product of 2-D matrices (deprecated; prefer torch.linalg.multi_dot)."""
    from .._dispatch import call_op
    _no_out(out)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    return call_op("_chain_matmul", tuple(matrices))


@op(tensors=("input", "other"), promote="none", function=False, method=False,
    namespace="torch.linalg", grad="LinalgCrossBackward0",
    saves={"input": ("other",), "other": ("input",)})
def linalg_cross(input, other, *, dim=-1):
    """Cross product of 3-vectors along dim, broadcasting the other dims."""
    if input.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {_name(input)} but found {_name(other)}")
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions. "
                           f"Got {input.ndim} and {other.ndim}")
    n = max(input.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    a, b = jnp.broadcast_arrays(input, other)
    a, b = jnp.moveaxis(a, dim, -1), jnp.moveaxis(b, dim, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c = jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
    return jnp.moveaxis(c, -1, dim)


@op(tensors=("x", "y"), promote="none", function=False, method=False, namespace="torch.linalg",
    grad=lambda x, y, **_: "VdotBackward0" if x.ndim == y.ndim == 1 else "SumBackward1",
    saves={"x": ("y",), "y": ("x",)})
def linalg_vecdot(x, y, *, dim=-1):
    """Dot product of vectors along dim (conjugating x), broadcasting the other dims."""
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_name(x)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_name(x)} and y of type {_name(y)} instead")
    xc = jnp.conj(x) if jnp.iscomplexobj(x) else x
    return jnp.sum(xc * y, axis=dim)


@op(tensors=("A", "B"), promote="none", function=False, method=False, namespace="torch.linalg",
    grad="LinalgSolveTriangularBackward0", saves=("A", "result"))
def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """Solution X of A X = B (or X A = B) for triangular A."""
    _need_matrix(A, "linalg.solve_triangular", "A")
    _need_matrix(B, "linalg.solve_triangular", "B")
    _need_square(A, "linalg.solve_triangular")
    _need_float(A, "linalg.solve_triangular")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {_name(A)} and B of type {_name(B)} instead")
    n = A.shape[-1]
    k = B.shape[-2] if left else B.shape[-1]
    if k != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    Ab, Bb = _broadcast_batch(A, B)
    return jax.lax.linalg.triangular_solve(Ab, Bb, left_side=left, lower=not upper,
                                           unit_diagonal=unitriangular)


@op(tensors=("A",), promote="none", function=False, method=False, namespace="torch.linalg",
    view=True, needs=(), grad="DiagonalBackward0")
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal (offset above or below the main one) of the matrices over dim1, dim2."""
    n = max(A.ndim, 1)
    for d in (dim1, dim2):
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
    if dim1 % n == dim2 % n:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return jnp.diagonal(A, offset=offset, axis1=dim1, axis2=dim2)


# -- addbmm, addmv, addr --------------------------------------------------------------------

@op(tensors=("input", "batch1", "batch2"), promote="none", inplace=True,
    saves={"batch1": ("batch2",), "batch2": ("batch1",)})
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (sum over the batch of batch1[i] @ batch2[i])."""
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch2.shape[0] != batch1.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    _same_dtype_bmm(batch1, batch2)
    prod = jnp.einsum("bij,bjk->ik", batch1, batch2)
    if input.dtype != prod.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_name(prod)} and "
                           f"{_name(input)}")
    return _add_scaled(input, prod, beta, alpha, "batch2")


@op(tensors=("input", "mat", "vec"), promote="none", inplace=True,
    saves={"mat": ("vec",), "vec": ("mat",)})
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec)."""
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if input.dtype != mat.dtype or mat.dtype != vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_name(input)}, {_name(mat)}, and {_name(vec)}")
    _check_mv(mat, vec)
    return _add_scaled(input, jnp.matmul(mat, vec), beta, alpha, "mat")


@op(tensors=("input", "vec1", "vec2"), inplace=True, saves={"vec1": ("vec2",), "vec2": ("vec1",)})
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)."""
    if vec1.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-d argument vec1, but got {vec1.ndim}-d")
    if vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-d argument vec2, but got {vec2.ndim}-d")
    if input.dtype == jnp.bool_:
        # PyTorch's boolean addr: (beta and input) or (alpha and vec1 outer vec2)
        prod = jnp.logical_and(vec1[:, None], vec2[None, :]) & bool(alpha)
        return jnp.logical_or(input & bool(beta), prod)
    prod = vec1[:, None] * vec2[None, :]
    if alpha != 1:
        prod = prod * jnp.asarray(alpha, prod.dtype)
    if beta == 0:
        return jnp.broadcast_to(prod, jnp.broadcast_shapes(input.shape, prod.shape))
    if beta != 1:
        input = input * jnp.asarray(beta, input.dtype)
    return input + prod
