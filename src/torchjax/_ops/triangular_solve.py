"""Op-table row: torch.triangular_solve (and Tensor.triangular_solve), PyTorch's deprecated
form of linalg.solve_triangular with the arguments reversed, returning the solution and a
copy of A (broadcast to the batch)."""

from __future__ import annotations

import warnings

import jax

from ._registry import op
from ._solve_checks import check_b_and_a
from .torch_linalg import _broadcast_batch, _name

_WARNED = [False]


def _warn_deprecated(**_):
    # PyTorch's TORCH_WARN_ONCE, given on the call (the row itself runs compiled)
    if not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn(
            "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
            "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
            "arguments reversed and does not return a copy of one of the inputs.\nX = "
            "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
            "torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=4)


@op(tensors=("input", "A"), promote="none", out_names=("solution", "cloned_coefficient"),
    saves=("A", "result"), check=_warn_deprecated)
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """X with op(A) X = input, A triangular (upper or lower), op(A) = A or A^T."""
    for x, arg in ((input, "b"), (A, "A")):
        if x.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {arg} to have at least 2 "
                               f"dimensions, but it has {x.ndim} dimensions instead")
    check_b_and_a("triangular_solve", input, A)
    if not jax.numpy.issubdtype(A.dtype, jax.numpy.inexact) or A.dtype.itemsize < 4:
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for '{_name(A)}'")
    Ab, Bb = _broadcast_batch(A, input)
    X = jax.lax.linalg.triangular_solve(Ab, Bb, left_side=True, lower=not upper,
                                        transpose_a=bool(transpose),
                                        unit_diagonal=bool(unitriangular))
    return X, Ab
