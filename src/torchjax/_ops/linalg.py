"""Matrix products: mm, bmm, matmul, dot, mv, outer, einsum, t, addmm, baddbmm.

PyTorch's products do not promote: both operands must have the same dtype (outer, which is a
broadcast multiply, is the exception). Shape and dtype errors are raised while tracing, with
PyTorch's messages.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from .. import _dtypes
from ._registry import function, op
from .reduction import _vector_norm


def _type_name(dtype):
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(dtype).name]

# C++ type names, as PyTorch's "expected m1 and m2 to have the same dtype" message prints them
_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
        "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _scalar(x):
    return _dtypes.SCALAR_NAMES.get(jnp.dtype(x.dtype).name, str(x.dtype))


def _cpp(x):
    return _CPP.get(jnp.dtype(x.dtype).name, str(x.dtype))


def _same_dtype_mm(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cpp(a)} != "
                           f"{_cpp(b)}")


def _same_dtype_bmm(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_scalar(a)} but found {_scalar(b)}")


def _check_mm(a, b):
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} "
                           f"and {b.shape[0]}x{b.shape[1]})")


def _check_mv(m, v):
    _same_mv_dtype(m, v)
    if m.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({m.shape[0]}), mat "
                           f"({m.shape[0]}x{m.shape[1]}), vec ({v.shape[0]})")


def _same_mv_dtype(m, v):
    if m.dtype != v.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_scalar(v)}, "
                           f"{_scalar(m)}, and {_scalar(v)}")


def _check_dot(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_scalar(a)} and {_scalar(b)}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
            f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
            "respectively")


def _check_bmm_sizes(batch, k1, k2):
    if k1 != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {k1}] but got: [{batch}, {k2}].")


# A product's gradient for each factor reads the other factor(s), so PyTorch saves a factor only
# when another one requires grad (see _saves.py): `x @ w` with a frozen w keeps nothing of x
_CROSS = {"input": ("other",), "other": ("input",)}
_MAT2 = {"input": ("mat2",), "mat2": ("input",)}


@op(tensors=("input", "mat2"), promote="none", saves=_MAT2)
def mm(input, mat2):
    """Matrix product of two 2-D tensors."""
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _same_dtype_mm(input, mat2)
    _check_mm(input, mat2)
    return jnp.matmul(input, mat2)


@op(tensors=("input", "mat2"), promote="none", saves=_MAT2)
def bmm(input, mat2):
    """Batched matrix product of two 3-D tensors with the same batch size."""
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if mat2.shape[0] != input.shape[0] or mat2.shape[1] != input.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: "
                           f"[{mat2.shape[0]}, {mat2.shape[1]}].")
    _same_dtype_bmm(input, mat2)
    return jnp.matmul(input, mat2)


def _check_matmul(a, b):
    """PyTorch's errors for each of matmul's cases (it folds or broadcasts to dot/mv/mm/bmm)."""
    da, db = jnp.ndim(a), jnp.ndim(b)
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D "
                           f"and {db}D")
    if da == 1 and db == 1:
        return _check_dot(a, b)
    if db == 1:  # mv, with the batch dims of a folded into its rows
        rows = math.prod(a.shape[:-1])
        return _check_mv(a.reshape(rows, a.shape[-1]) if da > 2 else a, b)
    if db == 2:  # mm, with a 1-D a as one row and the batch dims of a folded into its rows
        _same_dtype_mm(a, b)
        a2 = a.reshape(-1, a.shape[-1]) if da != 2 else a
        return _check_mm(a2, b)
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    nb = max(len(batch_a), len(batch_b))
    for i in range(1, nb + 1):
        x = batch_a[-i] if i <= len(batch_a) else 1
        y = batch_b[-i] if i <= len(batch_b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {nb - i}")
    _same_dtype_bmm(a, b)
    batch = math.prod(jnp.broadcast_shapes(batch_a, batch_b))
    _check_bmm_sizes(batch, a.shape[-1], b.shape[-2] if db > 1 else b.shape[0])


def _matmul_grad(input, other):
    # PyTorch routes matmul to a different op per case, and its grad_fn shows which
    a, b = min(input.ndim, 3), min(other.ndim, 3)
    return {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4",
            (2, 2): "MmBackward0", (2, 3): "CloneBackward0"}.get((a, b), "UnsafeViewBackward0")


@op(tensors=("input", "other"), promote="none", dunders=("__matmul__",),
    rdunders=("__rmatmul__",), grad=_matmul_grad, saves=_CROSS)
def matmul(input, other):
    """Matrix product with NumPy's broadcasting rules for 1-D and batched inputs."""
    _check_matmul(input, other)
    return jnp.matmul(input, other)


@op(tensors=("input", "tensor"), promote="none",
    saves={"input": ("tensor",), "tensor": ("input",)})
def dot(input, tensor):
    """Inner product of two 1-D tensors."""
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    _check_dot(input, tensor)
    return jnp.dot(input, tensor)


@op(tensors=("input", "other"), promote="none", saves=_CROSS)
def vdot(input, other):
    """The dot product of two 1-D tensors, conjugating the first."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.dtype != other.dtype:
        raise RuntimeError(f"vdot expected both vectors to have same dtype, but found "
                           f"{_type_name(input.dtype)} and {_type_name(other.dtype)}")
    if input.shape != other.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{other.shape[0]}] to have the same number of elements, but "
                           "got different sizes")
    return jnp.vdot(input, other)


@op(tensors=("input", "other"), saves=("input", "other", "result"))
def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    if not jnp.issubdtype(jnp.result_type(input, other), jnp.inexact):
        raise RuntimeError("dist only supports floating-point dtypes")
    d = input - other
    return _vector_norm(d, p, tuple(range(d.ndim)), False)


# PyTorch computes inner through tensordot (a 0-d operand: a multiply)
@op(tensors=("input", "other"), grad=lambda input, other: "MulBackward0"
    if 0 in (input.ndim, other.ndim) else "ViewBackward0", saves=_CROSS)
def inner(input, other):
    """The sum of products over the last dims of input and other."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return jnp.tensordot(input, other, axes=((-1,), (-1,)))


@op(tensors=("input", "vec"), promote="none",
    saves={"input": ("vec",), "vec": ("input",)})
def mv(input, vec):
    """Matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_mv(input, vec)
    return jnp.matmul(input, vec)


# PyTorch computes outer as a broadcast multiply, so it promotes and records MulBackward0.
@op(tensors=("input", "vec2"), aliases=("ger",), grad="MulBackward0",
    saves={"input": ("vec2",), "vec2": ("input",)})
def outer(input, vec2):
    """Outer product of two 1-D tensors."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    if input.dtype == jnp.bool_:
        return jnp.logical_and(input[:, None], vec2[None, :])
    return input[:, None] * vec2[None, :]


def _n_operands(equation):
    lhs = equation.split("->")[0]
    return lhs.count(",") + 1


# einsum's grad_fn in PyTorch depends on the equation (ViewBackward0 for contractions, which
# are the common case; MulBackward0, PermuteBackward0, SumBackward1 for others).
@op(name="einsum", tensors=(), tensor_list="operands", promote="none", function=False,
    method=False, grad="ViewBackward0")
def _einsum(equation, operands):
    """Einstein summation over the operands."""
    want = _n_operands(equation)
    if len(operands) < want:
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(operands) > want:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    for x in operands[1:]:
        _same_dtype_bmm(operands[0], x)
    eq = equation.replace(" ", "")
    _check_einsum_sizes(eq, operands)
    return jnp.einsum(eq, *operands)


def _check_einsum_sizes(eq, operands):
    """PyTorch's message for a subscript whose sizes disagree (1 broadcasts)."""
    seen: dict = {}
    for k, (subs, x) in enumerate(zip(eq.split("->")[0].split(","), operands)):
        if "." in subs:
            return  # with an ellipsis the labels do not line up with dims one to one
        for label, size in zip(subs, x.shape):
            prev = seen.get(label)
            if prev is not None and size != prev and 1 not in (size, prev):
                raise RuntimeError(f"einsum(): subscript {label} has size {size} for operand "
                                   f"{k} which does not broadcast with previously seen size "
                                   f"{prev}")
            if prev is None or prev == 1:
                seen[label] = size


@function(method=False)
def einsum(equation, *operands):
    """Einstein summation: einsum("ij,jk->ik", a, b) or einsum("ij,jk->ik", [a, b])."""
    from .._dispatch import call_op
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    return call_op("einsum", equation, tuple(operands))


@op(promote="none", needs=(), view=True, grad="TBackward0")
def t(input):
    """Transpose of a tensor of at most 2 dims."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return input.T


def _add_scaled(input, prod, beta, alpha, what):
    if input.dtype != prod.dtype:
        raise RuntimeError(f"self and {what} must have the same dtype, but got {_scalar(input)} "
                           f"and {_scalar(prod)}")
    try:
        jnp.broadcast_shapes(input.shape, prod.shape)
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({prod.shape[-1]}) must match the "
                           f"existing size ({input.shape[-1]}) at non-singleton dimension "
                           f"{len(prod.shape) - 1}.  Target sizes: {list(prod.shape)}.  Tensor "
                           f"sizes: {list(input.shape)}") from None
    if alpha != 1:
        prod = prod * jnp.asarray(alpha, prod.dtype)
    if beta == 0:  # PyTorch ignores input then, NaN and inf included
        return jnp.broadcast_to(prod, jnp.broadcast_shapes(input.shape, prod.shape))
    if beta != 1:
        input = input * jnp.asarray(beta, input.dtype)
    return input + prod


@op(tensors=("input", "mat1", "mat2"), promote="none", inplace=True,
    saves={"mat1": ("mat2",), "mat2": ("mat1",)})
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2)."""
    if mat1.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    _same_dtype_mm(mat1, mat2)
    _check_mm(mat1, mat2)
    return _add_scaled(input, jnp.matmul(mat1, mat2), beta, alpha, "mat2")


@op(tensors=("input", "batch1", "batch2"), promote="none", inplace=True,
    saves={"batch1": ("batch2",), "batch2": ("batch1",)})
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch2.shape[0] != batch1.shape[0] or batch2.shape[1] != batch1.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")
    _same_dtype_bmm(batch1, batch2)
    return _add_scaled(input, jnp.matmul(batch1, batch2), beta, alpha, "batch2")
