"""Op-table rows: QR, SVD and the Hermitian eigendecomposition (torch.linalg and the
deprecated torch.qr / torch.svd), on XLA's LAPACK-backed kernels, which PyTorch's CPU build
calls too, so the factors come out with the same signs."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._registry import function, op
from .torch_linalg import _hermitian_from, _mH, _need_float, _need_matrix, _no_out, _square_float


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

