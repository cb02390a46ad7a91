"""torch.SymInt, torch.SymFloat, torch.SymBool: the classes of PyTorch's symbolic sizes.

torchjax's sizes are always plain Python numbers (JAX traces with concrete shapes), so no
object of these classes is ever made: they exist for the checks code written for
torch.compile does, `isinstance(n, torch.SymInt)`, which is False for a plain int as in
PyTorch, and for annotations (torch.types.IntLikeType is `int | SymInt`).
"""

from __future__ import annotations

__all__ = ["SymInt", "SymFloat", "SymBool"]


class _Symbolic:
    __slots__ = ("node",)

    def __init__(self, node):
        raise RuntimeError(f"torch.{type(self).__name__} is not supported by torchjax: its "
                           f"sizes are plain Python numbers, never symbolic")


class SymInt(_Symbolic):
    """A symbolic int in PyTorch; never made in torchjax."""


class SymFloat(_Symbolic):
    """A symbolic float in PyTorch; never made in torchjax."""


class SymBool(_Symbolic):
    """A symbolic bool in PyTorch; never made in torchjax."""


for _cls in (SymInt, SymFloat, SymBool):
    _cls.__module__ = "torch"
