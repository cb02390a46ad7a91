"""Matrix products: mm, bmm, matmul, dot, mv, outer, einsum, t."""

from __future__ import annotations

import jax.numpy as jnp

from ._registry import op


def _mm_explain(input, mat2, **_):
    a, b = input.shape, mat2.shape
    if len(a) != 2:
        raise RuntimeError(f"self must be a matrix")
    if len(b) != 2:
        raise RuntimeError(f"mat2 must be a matrix")
    if a[1] != b[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and "
                           f"{b[0]}x{b[1]})")


@op(tensors=("input", "mat2"), explain=_mm_explain)
def mm(input, mat2):
    """Matrix product of two 2-D tensors."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise TypeError("mm needs matrices")
    return jnp.matmul(input, mat2)


@op(tensors=("input", "other"), dunders=("__matmul__",), rdunders=("__rmatmul__",),
    grad="MmBackward0")
def matmul(input, other):
    """Matrix product with NumPy's broadcasting rules for 1-D and batched inputs."""
    return jnp.matmul(input, other)


@op(promote="none", needs=(), view=True, grad="TBackward0")
def t(input):
    """Transpose of a tensor of at most 2 dims."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return input.T
