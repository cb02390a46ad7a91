"""Op-table rows: torch.view_copy, expand_copy, permute_copy, t_copy, transpose_copy,
squeeze_copy, unsqueeze_copy, select_copy, slice_copy, alias_copy, detach_copy, unbind_copy,
split_copy, split_with_sizes_copy, unfold_copy, view_as_real_copy and view_as_complex_copy.

PyTorch's "view copy" variants give what the view gives, as a new tensor (no view of the
input), under the view's backward node with "_copy" appended (ViewBackward0_copy). Each row
here is the view row's own function (OPS[name].fn) with the _copy signature; only the
publication (not a view, its own node name) differs.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._nograd import no_derivative
from ._registry import OPS, op

_FLAGS = dict(promote="none", needs=(), method=False)


def _fn(name):
    return OPS[name].fn


@op(grad="ViewBackward0_copy", **_FLAGS)
def view_copy(input, size):
    """input.view(size), as a new tensor."""
    return _fn("view")(input, tuple(size))


@op(grad="ExpandBackward0_copy", **_FLAGS)
def expand_copy(input, size, *, implicit=False):
    """input.expand(size), as a new tensor."""
    return _fn("expand")(input, tuple(size))


@op(grad="PermuteBackward0_copy", **_FLAGS)
def permute_copy(input, dims):
    """input.permute(dims), as a new tensor."""
    return _fn("permute")(input, tuple(dims))


@op(grad="TBackward0_copy", **_FLAGS)
def t_copy(input):
    """input.t(), as a new tensor."""
    return _fn("t")(input)


@op(grad="TransposeBackward0_copy", **_FLAGS)
def transpose_copy(input, dim0, dim1):
    """input.transpose(dim0, dim1), as a new tensor."""
    return _fn("transpose")(input, dim0, dim1)


def _squeeze_grad(dim=None, **_):
    # PyTorch numbers squeeze's overloads: all dims, one dim, a list of dims
    kind = 0 if dim is None else 2 if isinstance(dim, (tuple, list)) else 1
    return f"SqueezeBackward{kind}_copy"


@op(grad=_squeeze_grad, **_FLAGS)
def squeeze_copy(input, dim=None):
    """input.squeeze(dim), as a new tensor."""
    if dim is None:
        return _fn("squeeze")(input)
    if isinstance(dim, (tuple, list)):
        return _fn("_squeeze_dims")(input, tuple(dim))
    return _fn("_squeeze_dim")(input, dim)


@op(grad="UnsqueezeBackward0_copy", **_FLAGS)
def unsqueeze_copy(input, dim):
    """input.unsqueeze(dim), as a new tensor."""
    return _fn("unsqueeze")(input, dim)


@op(grad="SelectBackward0_copy", **_FLAGS)
def select_copy(input, dim, index):
    """input.select(dim, index), as a new tensor."""
    return _fn("select")(input, dim, index)


@op(grad="SliceBackward0_copy", **_FLAGS)
def slice_copy(input, dim=0, start=None, end=None, step=1):
    """input[..., start:end:step, ...] along dim, as a new tensor (Python's clamping)."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = dim % input.ndim if -input.ndim <= dim < input.ndim else None
    if d is None:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-input.ndim}, {input.ndim - 1}], but got {dim})")
    lo, hi, st = slice(start, end, step).indices(input.shape[d])
    return jax.lax.slice_in_dim(input, lo, max(hi, lo), st, axis=d)


@op(grad="AliasBackward0_copy", **_FLAGS)
def alias_copy(input):
    """A new tensor with input's values."""
    return jnp.array(input, copy=True)


_DETACH_COPY_GRAD = no_derivative("derivative for aten::detach_copy is not implemented")


@op(grad="NotImplemented", **_FLAGS)
def detach_copy(input):
    """input's values as a new tensor. PyTorch still records it (a NotImplemented node): the
    result requires grad when input does, and backpropagating through it raises."""
    return _DETACH_COPY_GRAD(jnp.array(input, copy=True), input)


@op(grad="UnbindBackward0_copy", **_FLAGS)
def unbind_copy(input, dim=0):
    """input.unbind(dim), as new tensors."""
    return _fn("unbind")(input, dim)


@op(tensors=("input",), grad="SplitBackward0_copy", **_FLAGS)
def split_copy(input, split_size, dim=0):
    """input.split(split_size, dim), as new tensors."""
    return _fn("split")(input, split_size, dim)


@op(grad="SplitWithSizesBackward0_copy", **_FLAGS)
def split_with_sizes_copy(input, split_sizes, dim=0):
    """input.split(split_sizes, dim), as new tensors."""
    return _fn("split_with_sizes")(input, split_sizes, dim)


@op(grad="UnfoldBackward0_copy", **_FLAGS)
def unfold_copy(input, dimension, size, step):
    """input.unfold(dimension, size, step), as a new tensor."""
    return _fn("unfold")(input, dimension, size, step)


@op(grad="ViewAsRealBackward0_copy", **_FLAGS)
def view_as_real_copy(input):
    """torch.view_as_real(input), as a new tensor."""
    return _fn("view_as_real")(input)


def _no_complex_grad(input, **_):
    # PyTorch has no derivative formula for this complex-output copy and refuses to record it
    from .._autograd.grad_mode import STATE
    if STATE.grad_enabled and getattr(input, "requires_grad", False):
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for "
                           "outputs with complex dtype.")


@op(grad="ViewAsComplexBackward0_copy", check=_no_complex_grad, **_FLAGS)
def view_as_complex_copy(input):
    """torch.view_as_complex(input), as a new tensor."""
    return _fn("view_as_complex")(input)
