"""Op-table rows: matrix products and powers (matrix_power, matrix_exp, multi_dot, cross,
vecdot, addbmm, addmv, addr), the triangular solve and torch.linalg.diagonal."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._registry import function, op
from .linalg import _add_scaled, _check_mv, _same_dtype_bmm
from .torch_linalg import (
    _broadcast_batch,
    _name,
    _need_float,
    _need_matrix,
    _need_square,
    _no_out,
    _square_float,
)


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
