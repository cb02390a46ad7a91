"""torch.DisableTorchFunction and torch.DisableTorchFunctionSubclass: context managers that,
in PyTorch, stop __torch_function__ dispatch inside them.

Tensor-subclass code wraps its calls in them (`with torch.DisableTorchFunctionSubclass():`).
torchjax's functions never dispatch to __torch_function__ (torchjax.overrides), so inside
them nothing changes: each is a context manager that does nothing.
"""

from __future__ import annotations

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass"]


class _NothingToDisable:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class DisableTorchFunctionSubclass(_NothingToDisable):
    """Within it, PyTorch skips subclasses' __torch_function__; torchjax never calls it."""


class DisableTorchFunction(_NothingToDisable):
    """Within it, PyTorch skips all __torch_function__ overrides and modes."""


DisableTorchFunction.__module__ = DisableTorchFunctionSubclass.__module__ = "torch"
