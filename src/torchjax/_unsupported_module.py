"""The attribute lookup of a torch submodule torchjax names but does not implement.

`torch.nested`, `torch.export`, `torch.ao`, ... exist as modules so that `import torch.nested`
and `hasattr(torch, "nested")` behave as in PyTorch, and so that a use of one of their names
fails at that name with the reason: `torch.nested.nested_tensor is not supported by torchjax:
<why>`. The module's `__getattr__` (PEP 562) raises AttributeError, so hasattr() is False.
"""

from __future__ import annotations

__all__ = ["unsupported_getattr"]


def unsupported_getattr(module_name: str, why: str):
    """A module-level __getattr__ for torchjax.X, naming torch.X.<name> and the reason."""
    torch_name = "torch" + module_name[len("torchjax"):]

    def __getattr__(name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"{torch_name}.{name} is not supported by torchjax: {why}")

    __getattr__.__qualname__ = __getattr__.__name__
    return __getattr__
