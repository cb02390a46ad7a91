"""Op-table rows: torch.linalg.eig and eigvals, the eigendecomposition of general (not
necessarily symmetric) square matrices, complex-valued.

Both run LAPACK's geev through XLA on CPU, as PyTorch does: the eigenvectors have the same
normalisation (unit norm, largest component real), and the eigenvalues usually come in the
same order, but not always: PyTorch's geev is MKL's, jaxlib's another LAPACK's, and their
QR iterations can converge to the eigenvalues in another order (often for symmetric float32
matrices of order 16 or more), which no reordering here can reproduce; eigenvalue i still
goes with eigenvector column i (tests/test_linalg.py compares the pairs as sets). Gradients
are JAX's, which agree with PyTorch's formulas for losses that do not depend on the
eigenvectors' arbitrary phase. One difference: for a loss that does depend on that
phase, PyTorch's backward raises ("... so it is ill-defined"), JAX's returns a gradient.
"""

from __future__ import annotations

import jax

from ._registry import op
from .torch_linalg import _name, _square_float

_FLAGS = dict(tensors=("A",), promote="none", function=False, method=False,
              namespace="torch.linalg", grad="LinalgEigBackward0")


def _eig(A, vectors):
    if not jax.numpy.issubdtype(A.dtype, jax.numpy.inexact):
        # PyTorch picks the complex result type first, and there is none for an integer
        raise RuntimeError(f"Unknown Complex ScalarType for {_name(A)}")
    _square_float(A, "linalg.eig" if vectors else "linalg.eigvals")
    return jax.lax.linalg.eig(A, compute_left_eigenvectors=False,
                              compute_right_eigenvectors=vectors, enable_eigvec_derivs=vectors)


@op(out_names=("eigenvalues", "eigenvectors"), saves=("result",), **_FLAGS)
def linalg_eig(A):
    """Eigenvalues and right eigenvectors (columns) of square A, complex."""
    w, v = _eig(A, True)
    return w, v


@op(saves=("A",), **_FLAGS)
def linalg_eigvals(A):
    """The eigenvalues of square A, complex."""
    return _eig(A, False)[0]
