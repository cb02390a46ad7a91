"""torch.svd_lowrank and torch.pca_lowrank: randomized low-rank SVD (Halko, Martinsson and
Tropp, 2009, Algorithms 4.4 and 5.1) from torchjax's randn, matmul, QR and SVD, so gradients
flow through them. The random test matrix comes from torchjax's generator: factors differ
from PyTorch's draws by the randomness of the method (exactly recovered for a matrix of rank
at most q), shapes, dtypes and grad_fn names agree."""

from __future__ import annotations

from ._tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def _range_basis(A: Tensor, q: int, niter: int, M):
    """An orthonormal Q (m x q) whose range approximates that of A - M (subspace
    iteration with niter passes)."""
    from . import linalg, randn

    def times(B, adjoint=False):
        """(A - M) B, or (A - M)^H B."""
        out = (A.mH if adjoint else A).matmul(B)
        if M is not None:
            out = out - (M.mH if adjoint else M).matmul(B)
        return out

    R = randn(A.shape[-1], q, dtype=A.dtype, device=A.device)
    Q = linalg.qr(times(R)).Q
    for _ in range(niter):
        Q = linalg.qr(times(Q, adjoint=True)).Q
        Q = linalg.qr(times(Q)).Q
    return Q


def svd_lowrank(A: Tensor, q=6, niter=2, M=None):
    """(U, S, V) of rank q with A - M ≈ U diag(S) V^H."""
    from . import linalg
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # factor the adjoint, then swap U and V
        A = A.mH
        M = None if M is None else M.mH
    Q = _range_basis(A, q, niter, M)
    B = Q.mH.matmul(A)
    if M is not None:
        B = B - Q.mH.matmul(M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    return (V, S, U) if wide else (U, S, V)


def pca_lowrank(A: Tensor, q=None, center=True, niter=2):
    """(U, S, V) of a rank-q PCA of A's rows (centred by the column means when center)."""
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)"
                         f"={min(m, n)}")
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    mean = A.mean(dim=-2, keepdim=True)
    return svd_lowrank(A, q, niter=niter, M=mean)
