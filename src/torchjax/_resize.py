"""Tensor.resize_ / resize_as_ (and torch.resize_as_, the deprecated Tensor.resize /
resize_as): give a tensor a new shape in place, keeping its values in row-major order.

As in PyTorch, elements beyond the old size are uninitialised (zeros here) and shrinking does
not free the storage: the values cut off come back when the tensor grows again. torchjax keeps
those cut-off values beside the tensor for that. Views (of the tensor, or the tensor being
one) would need PyTorch's shared storage offsets: resizing them raises NotImplementedError.
"""

from __future__ import annotations

import math
import warnings

import jax.numpy as jnp

from ._tensor import Tensor
from ._x64 import scoped

__all__ = ["resize_as_"]

_TAIL = "_resize_tail"  # in a tensor's __dict__: the flat values past its size, kept


def _sizes(sizes) -> tuple:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    out = tuple(int(s) for s in sizes)
    if any(s < 0 for s in out):
        raise RuntimeError("numel: integer multiplication overflow")
    return out


@scoped
def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """Give self the shape `sizes` in place (row-major values kept, the rest uninitialised)."""
    from ._autograd.grad_mode import STATE
    from ._numpy_shared import _link_of
    shape = _sizes(sizes)
    if memory_format is not None and str(memory_format) != "torch.contiguous_format":
        raise NotImplementedError(f"Tensor.resize_(memory_format={memory_format}) is not "
                                  f"supported by torchjax")
    if self.requires_grad and STATE.grad_enabled:
        raise RuntimeError("cannot resize variables that require grad")
    if tuple(self.shape) == shape:
        return self
    old = self.numel()
    new = math.prod(shape)
    if _link_of(self)[1] is not None:  # shares a NumPy array's memory
        if new > old:
            raise RuntimeError("Trying to resize storage that is not resizable")
        raise NotImplementedError("Tensor.resize_ of a tensor sharing memory with a NumPy "
                                  "array is not supported by torchjax: resize a clone")
    if self._base is not None or self._views:
        raise NotImplementedError("Tensor.resize_ of a view, or of a tensor with views, is not "
                                  "supported by torchjax: resize a clone")
    flat = self._data.reshape(-1)
    tail = self.__dict__.pop(_TAIL, None)
    if tail is not None:
        flat = jnp.concatenate([flat, tail])
    if new > flat.shape[0]:
        flat = jnp.concatenate([flat, jnp.zeros(new - flat.shape[0], flat.dtype)])
    if flat.shape[0] > new:
        self.__dict__[_TAIL] = flat[new:]  # kept for a later growth, as PyTorch's storage
    self._data = flat[:new].reshape(shape)
    self._layout = None
    self._counter()[0] += 1
    return self


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    """input.resize_(the_template.shape)."""
    return resize_(input, tuple(the_template.shape), memory_format=memory_format)


def _resize(self: Tensor, *sizes) -> Tensor:
    """Deprecated: a resized copy (clone().resize_(sizes)), with PyTorch's warning."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), *sizes)


def _resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated: a copy resized to tensor's shape, with PyTorch's warning."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _resize(self, tuple(tensor.shape))


Tensor.resize_ = resize_
Tensor.resize_as_ = resize_as_
Tensor.resize = _resize
Tensor.resize_as = _resize_as
