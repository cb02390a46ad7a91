"""Tensor.as_subclass(cls): the same values, seen as an instance of a Tensor subclass.

As in PyTorch the result is an alias of self (writes through either are seen by both; when
self requires grad it is recorded as AliasBackward0) whose class is `cls`, so it prints as
`cls(...)` and `isinstance` sees the subclass. torchjax does not dispatch to a subclass's
`__torch_function__`: results of later ops on it are plain Tensors (PyTorch's default
`__torch_function__` would make them `cls` too).
"""

from __future__ import annotations

from ._tensor import Tensor


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """An alias of self whose class is cls (a subclass of Tensor)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    out = self[...]  # an identity view: AliasBackward0 when self requires grad
    out.__class__ = cls
    return out


Tensor.as_subclass = as_subclass
