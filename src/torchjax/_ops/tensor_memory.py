"""Tensor.data_ptr and const_data_ptr: where PyTorch would say a tensor's first element lies,
from torchjax's view bookkeeping.

XLA owns the real buffers, and an in-place write gives a tensor a new one, so the address is
a stand-in that keeps PyTorch's relations: each base tensor gets an address range of its own
the first time one is asked for (64-byte aligned, as PyTorch's CPU allocator), and a view,
detach() or .data alias points storage_offset elements into its base's range. So equal
pointers mean the same storage and offset, and an in-place op keeps the pointer, as code
that deduplicates parameters or finds tied weights by data_ptr() expects.
"""

from __future__ import annotations

import weakref

from ._registry import function

_ALIGN = 64
_next = [1 << 20]    # the next free address; 0 stays PyTorch's null pointer
_RANGES: dict = {}   # id(base) -> (weak reference to the base, its address)


def _address(base) -> int:
    entry = _RANGES.get(id(base))
    if entry is not None and entry[0]() is base:
        return entry[1]
    nbytes = max(base.numel(), 1) * base.element_size()
    start = _next[0]
    _next[0] = start + -(-nbytes // _ALIGN) * _ALIGN
    key = id(base)
    _RANGES[key] = (weakref.ref(base, lambda _, k=key: _RANGES.pop(k, None)), start)
    return start


@function(function=False)
def data_ptr(self) -> int:
    """The address of the first element: the base's range plus storage_offset() elements
    (0 for a tensor of no elements, which PyTorch reports as a null pointer)."""
    if self.numel() == 0:
        return 0
    base = self._base if self._base is not None else self
    return _address(base) + self.storage_offset() * self.element_size()


@function(function=False)
def const_data_ptr(self) -> int:
    """data_ptr() (PyTorch's read-only form)."""
    return data_ptr(self)
