"""DTensor factories (torch.distributed.tensor.ones, zeros, ...): made whole, then laid out.

One program holds the global value, so a factory makes it and places it; XLA keeps only each
device's shard after the placement.
"""

from __future__ import annotations

from ... import _creation
from ._dtensor import distribute_tensor

__all__ = ["ones", "zeros", "empty", "full", "rand", "randn"]


def _size(size) -> tuple:
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size


def _make(fn, size, dtype, requires_grad, device_mesh, placements, *extra):
    t = fn(_size(size), *extra, dtype=dtype)
    t.requires_grad_(requires_grad)
    return distribute_tensor(t, device_mesh, placements)


def ones(*size, dtype=None, layout=None, requires_grad=False, device_mesh=None, placements=None):
    """A DTensor of ones, placed on `device_mesh` as `placements` say.

    See https://pytorch.org/docs/stable/distributed.tensor.html#torch.distributed.tensor.ones.
    """
    return _make(lambda s, dtype: _creation.ones(s, dtype=dtype), size, dtype, requires_grad,
                 device_mesh, placements)


def zeros(*size, requires_grad=False, dtype=None, layout=None, device_mesh=None,
          placements=None):
    """A DTensor of zeros, placed on `device_mesh` as `placements` say.

    See https://pytorch.org/docs/stable/distributed.tensor.html#torch.distributed.tensor.zeros.
    """
    return _make(lambda s, dtype: _creation.zeros(s, dtype=dtype), size, dtype, requires_grad,
                 device_mesh, placements)


def empty(*size, dtype=None, layout=None, requires_grad=False, device_mesh=None,
          placements=None):
    """A DTensor of the given size on `device_mesh` with `placements` (zeros: JAX has no uninitialised memory).

    See https://pytorch.org/docs/stable/distributed.tensor.html#torch.distributed.tensor.empty.
    """
    return zeros(*size, dtype=dtype, requires_grad=requires_grad, device_mesh=device_mesh,
                 placements=placements)


def full(size, fill_value, *, dtype=None, layout=None, requires_grad=False, device_mesh=None,
         placements=None):
    """A DTensor filled with `fill_value`, placed on `device_mesh` as `placements` say.

    See https://pytorch.org/docs/stable/distributed.tensor.html#torch.distributed.tensor.full.
    """
    return _make(lambda s, v, dtype: _creation.full(s, v, dtype=dtype), (tuple(size),), dtype,
                 requires_grad, device_mesh, placements, fill_value)


def rand(*size, requires_grad=False, dtype=None, layout=None, device_mesh=None,
         placements=None):
    """A DTensor of uniform [0, 1) draws from torchjax's generator, placed on `device_mesh`.

    See https://pytorch.org/docs/stable/distributed.tensor.html#torch.distributed.tensor.rand.
    """
    return _make(lambda s, dtype: _creation.rand(s, dtype=dtype), size, dtype, requires_grad,
                 device_mesh, placements)


def randn(*size, requires_grad=False, dtype=None, layout=None, device_mesh=None,
          placements=None):
    """A DTensor of standard normal draws from torchjax's generator, placed on `device_mesh`.

    See https://pytorch.org/docs/stable/distributed.tensor.html#torch.distributed.tensor.randn.
    """
    return _make(lambda s, dtype: _creation.randn(s, dtype=dtype), size, dtype, requires_grad,
                 device_mesh, placements)
