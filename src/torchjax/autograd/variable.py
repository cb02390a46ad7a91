"""torch.autograd.Variable: PyTorch 0.3's wrapper, merged into Tensor since 0.4 and kept so
old scripts run (`from torch.autograd import Variable`; `Variable(x, requires_grad=True)`).

Calling it gives a new tensor sharing `data`'s values, detached from its graph, with the
requires_grad asked (a Parameter gives a plain Tensor); every tensor is an instance of it.
"""

from __future__ import annotations

import warnings

from .._tensor import Tensor

__all__ = ["Variable"]


class VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """`Variable(data, requires_grad=False, volatile=False)`: `data` detached, as a Tensor
    that requires grad when asked. `volatile` has no effect (use `torch.no_grad()`)."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(bool(requires_grad))
