"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric positive definite
problem A x = lambda B x, batched over leading dimensions.

PyTorch iterates LOBPCG from a random start until the residuals fall under `tol`. torchjax
solves the same problem with one dense eigendecomposition (torch.linalg.eigh, after reducing
A x = lambda B x with B's Cholesky factor), so it returns the converged eigenpairs directly:
the iteration controls (X as a start, n, iK, niter, tol, method, ortho_*) change nothing but
the checks PyTorch makes on them, and the gradients are eigh's. Eigenvalues come in PyTorch's
order (descending for largest, ascending for smallest); each eigenvector's sign is eigh's
(an eigenvector's sign is arbitrary, and PyTorch's depends on its random start); the
eigenvectors are B-orthonormal, as PyTorch's.
"""

from __future__ import annotations

__all__ = ["lobpcg"]


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """The k largest (largest=True, the default) or smallest eigenpairs (E, X) of A x =
    lambda B x (B the identity when None): E of shape (*, k), X of shape (*, m, k)."""
    from . import linalg  # the package's namespace, complete once this is called
    if tracker is not None:
        raise NotImplementedError(
            "torch.lobpcg(tracker=...) is not supported by torchjax: it solves with one dense "
            "eigendecomposition, so there are no iterations to track")
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller "
            f"than 3 x the number of requested eigenpairs (={n})")
    if not A.is_floating_point():
        A = A.float()  # PyTorch computes in the default floating type for integer input
    if B is None:
        E, V = linalg.eigh(A)
    else:
        # A x = lambda L L^T x becomes (L^-1 A L^-T) y = lambda y with x = L^-T y, which makes
        # the x B-orthonormal
        L = linalg.cholesky(B.to(A.dtype))
        left = linalg.solve_triangular(L, A, upper=False)
        C = linalg.solve_triangular(L, left.mT, upper=False)
        E, W = linalg.eigh(C)
        V = linalg.solve_triangular(L.mT, W, upper=True)
    if largest is None or largest:
        return E[..., -k:].flip(-1), V[..., -k:].flip(-1)
    return E[..., :k], V[..., :k]
