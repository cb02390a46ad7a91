"""torch.empty_permuted and Tensor.new_empty_strided: empty tensors with a given memory layout,
made through torch.empty_strided (torchjax keeps strides as metadata over XLA's arrays)."""

from __future__ import annotations

from ._creation import empty_strided
from ._tensor import Tensor

__all__ = ["empty_permuted"]


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False) -> Tensor:
    """An empty tensor of `size` whose dims lie in memory in the order physical_layout
    (outermost first): empty_permuted((N, C, H, W), (0, 2, 3, 1)) is channels-last."""
    size, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    if len(order) != len(size):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           "physical_layout; i.e. len(size) = "
                           f"{len(size)} is not equal to len(physical_layout) = {len(order)}")
    if sorted(order) != list(range(len(size))):
        raise RuntimeError("Duplicate dim not allowed")
    strides = [0] * len(size)
    step = 1
    for d in reversed(order):  # innermost dim first
        strides[d] = step
        step *= max(size[d], 1)
    return empty_strided(size, strides, dtype=dtype, layout=layout, device=device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False) -> Tensor:
    """torch.empty_strided with this tensor's dtype and device unless given."""
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         layout=layout, device=self.device if device is None else device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


Tensor.new_empty_strided = new_empty_strided
