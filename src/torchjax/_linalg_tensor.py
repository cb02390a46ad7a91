"""torch.linalg.vander, tensorinv and tensorsolve, built from torchjax's ops in PyTorch's
order (so gradients flow and the grad_fn is PyTorch's where the last op is the same)."""

from __future__ import annotations

import math

from . import _dtypes
from ._tensor import Tensor

__all__ = ["vander", "tensorinv", "tensorsolve"]


def vander(x: Tensor, *, N=None) -> Tensor:
    """The Vandermonde matrix of x with increasing powers x**0 ... x**(N-1) along the last
    dim (batched over x's leading dims)."""
    from . import cat
    if x.dtype is _dtypes.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    x1 = x.unsqueeze(-1) if x.dim() == 0 else x
    shape = list(x1.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x1.unsqueeze(-1).expand(*shape, n - 1).cumprod(-1)  # x, x**2, ..., x**(n-1)
    return cat([powers.new_ones(*shape, 1), powers], -1)


def tensorinv(A: Tensor, ind: int = 2, *, out=None) -> Tensor:
    """The inverse of A taken as a matrix of its first `ind` dims by the rest, shaped
    A.shape[ind:] + A.shape[:ind]."""
    from . import linalg
    if out is not None:
        raise NotImplementedError("torch.linalg.tensorinv(out=...) is not supported by "
                                  "torchjax: use the returned tensor")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    inverse = linalg.inv(A.reshape(rows, cols))
    return inverse.reshape(*A.shape[ind:], *A.shape[:ind])


def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out=None) -> Tensor:
    """X with tensordot(A, X, X.ndim) == B; `dims` of A are first moved to its end."""
    from . import linalg
    if out is not None:
        raise NotImplementedError("torch.linalg.tensorsolve(out=...) is not supported by "
                                  "torchjax: use the returned tensor")
    if dims is not None:
        dims = list(dims)
        A = A.movedim(dims, list(range(A.dim() - len(dims), A.dim())))
    result_shape = A.shape[B.dim():]
    rest, other = math.prod(result_shape), B.numel()
    # (PyTorch's message names A's leading dims but compares with B's size)
    if rest != other:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {rest} != {other}")
    X = linalg.solve(A.reshape(other, rest), B.reshape(rest))
    return X.reshape(*result_shape)
