"""parallelize_module: apply a tensor-parallel plan to a module's submodules."""

from __future__ import annotations

import fnmatch

from ...device_mesh import DeviceMesh
from ._style import ParallelStyle


def parallelize_module(module, device_mesh: DeviceMesh | None = None, parallelize_plan=None, *,
                       src_data_rank: int | None = 0):
    """Applies `parallelize_plan` ({submodule name or glob: style}, or one style for `module`
    itself) over the 1-d `device_mesh`, in place, and returns the module."""
    if device_mesh is None:
        from .._dtensor import _default_mesh
        device_mesh = _default_mesh()
    if parallelize_plan is None:
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        return parallelize_plan._apply(module, device_mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(f"parallelize_plan must be a ParallelStyle or a dict of them, got "
                        f"{type(parallelize_plan).__name__}")
    names = dict(module.named_modules())
    for pattern, style in parallelize_plan.items():
        if not isinstance(style, ParallelStyle):
            raise TypeError(f"parallelize_plan[{pattern!r}] is not a ParallelStyle: {style!r}")
        # PyTorch matches each dotted atom with fnmatch ("layers.*.mlp")
        hits = [n for n in names if n and _matches(n, pattern)]
        if not hits:
            raise ValueError(f"parallelize_plan: no submodule of {type(module).__name__} "
                             f"matches {pattern!r}")
        for n in hits:
            style._apply(names[n], device_mesh)
    return module


def _matches(name: str, pattern: str) -> bool:
    a, b = name.split("."), pattern.split(".")
    return len(a) == len(b) and all(fnmatch.fnmatch(x, y) for x, y in zip(a, b))
