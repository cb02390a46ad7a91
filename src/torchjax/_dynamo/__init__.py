"""torch._dynamo's user-facing names, for scripts that reach for them: explain, reset,
config (recompile_limit), mark_dynamic, disable, is_compiling and exc.Unsupported."""

from __future__ import annotations

from ..compiler import config, disable, explain, is_compiling, reset
from . import exc


def mark_dynamic(t, index, *, min=None, max=None) -> None:
    """Accepted for PyTorch scripts. XLA programs have static shapes: a new size of a marked
    dimension still compiles a new program (see docs/compile.md, "Recompiles")."""
    if not hasattr(t, "_dynamic_dims"):
        t.__dict__["_dynamic_dims"] = set()
    dims = index if isinstance(index, (list, tuple)) else [index]
    t.__dict__["_dynamic_dims"].update(dims)


def mark_static(t, index=None) -> None:
    """Accepted for PyTorch scripts; every dimension is static already."""


__all__ = ["explain", "reset", "config", "mark_dynamic", "mark_static", "disable",
           "is_compiling", "exc"]
