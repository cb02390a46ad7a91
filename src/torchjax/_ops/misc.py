"""Smaller ops real programs use that have no family of their own: frexp and renorm (rows),
fill_diagonal_, sum_to_size, narrow_copy, split_with_sizes, adjoint, is_nonzero,
get_device, and apply_/map_ (a Python function over the elements, as PyTorch's CPU tensors
allow)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._registry import function, op


@op(promote="none", out_names=("mantissa", "exponent"), grad="FrexpBackward0", saves=())
def frexp(input):
    """input as mantissa * 2 ** exponent, mantissa in [0.5, 1) in magnitude."""
    if not jnp.issubdtype(input.dtype, jnp.floating):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    _, exponent = jnp.frexp(input)
    exponent = jax.lax.stop_gradient(exponent)
    # the mantissa as input scaled by an exact power of two: its gradient is 2 ** -exponent
    mantissa = input * jnp.exp2(-exponent.astype(input.dtype))
    return mantissa, exponent.astype(jnp.int32)


def _check_renorm(input, p, dim, maxnorm, **_):
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           f"dimensions")


@op(inplace=True, check=_check_renorm)
def renorm(input, p, dim, maxnorm):
    """Each slice along dim scaled down to p-norm maxnorm where its norm exceeds it."""
    d = dim % input.ndim
    axes = tuple(i for i in range(input.ndim) if i != d)
    a = jnp.abs(input)
    if p == float("inf"):
        norm = jnp.max(a, axis=axes, keepdims=True)
    else:
        norm = jnp.sum(a ** p, axis=axes, keepdims=True) ** (1.0 / p)
    factor = jnp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(input.dtype)
    return input * factor


@function(function=False)
def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal in place (every dim the same size, or a tall matrix, which with
    wrap=True starts again every n + 1 rows)."""
    shape = tuple(self.shape)
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(shape)
    if self.dim() == 2:
        rows, cols = shape
        step = cols + 1
        last = rows * cols if wrap and rows > cols else n * cols
        flat = np.arange(0, last, step)
        idx = np.unravel_index(flat, shape)
    else:
        idx = tuple(np.arange(n) for _ in shape)
    from .. import _creation
    self[tuple(_creation.tensor(i) for i in idx)] = fill_value
    return self


@function(function=False)
def sum_to_size(self, *size):
    """self summed down to `size`, a shape self broadcasts from."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(self.shape)
    if len(size) > len(shape) or any(s not in (1, n) for s, n in zip(size[::-1], shape[::-1])):
        raise RuntimeError(f"size {{[{', '.join(map(str, size))}]}} is not expandable to "
                           f"size {{[{', '.join(map(str, shape))}]}}.")
    lead = len(shape) - len(size)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size)
                                      if s == 1 and shape[lead + i] != 1)
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(size) if lead else out


@function()
def narrow_copy(input, dim, start, length):
    """A copy of input.narrow(dim, start, length)."""
    return input.narrow(dim, start, length).clone()


@function()
def split_with_sizes(input, split_sizes, dim=0):
    """input split into pieces of the given sizes along dim."""
    return input.split(list(split_sizes), dim)


@function()
def adjoint(input):
    """The conjugate transpose of the last two dims (a view)."""
    return input.mH


@function()
def is_nonzero(input):
    """Whether the single value of input is not zero."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input)


@function()
def get_device(input):
    """The device index of input: -1 on the CPU."""
    d = input.device
    return -1 if d.type in ("cpu", "meta") else (d.index or 0)


def _python_map(self, fn, *others):
    # PyTorch runs the function element by element on CPU tensors; here on the host values
    values = [np.asarray(t.detach()._data) for t in (self, *others)]
    values = [np.broadcast_to(v, values[0].shape) for v in values]
    out = np.vectorize(fn, otypes=[values[0].dtype])(*values)
    from .. import _creation
    return self.copy_(_creation.tensor(out, dtype=self.dtype))


@function(function=False)
def apply_(self, callable):
    """Replace each element x by callable(x), in place (CPU tensors in PyTorch)."""
    return _python_map(self, callable)


@function(function=False)
def map_(self, tensor, callable):
    """Replace each element x by callable(x, y), y the matching element of tensor."""
    return _python_map(self, callable, tensor)


@function(function=False)
def map2_(self, x, y, callable):
    """Replace each element s by callable(s, a, b), a and b the matching elements of x, y."""
    return _python_map(self, callable, x, y)
