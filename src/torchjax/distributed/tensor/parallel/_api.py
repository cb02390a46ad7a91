"""parallelize_module: apply a tensor-parallel plan to a module's submodules."""

from __future__ import annotations

import fnmatch
import warnings

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
        warnings.warn("No parallelize_plan is provided and auto-parallel is not supported at "
                      "the moment, so this parallelize_module call will do nothing.",
                      stacklevel=2)
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        return parallelize_plan._apply(module, device_mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(f"Expect Union[ParallelStyle, Dict[str, ParallelStyle]] for "
                        f"parallelize_plan, {type(parallelize_plan)} found!")
    for path, style in parallelize_plan.items():
        if not isinstance(style, ParallelStyle):
            raise TypeError(f"parallelize_plan[{path!r}] is not a ParallelStyle: {style!r}")
        if path == "":  # (PyTorch's shortcut: the module itself)
            style._apply(module, device_mesh)
        else:
            _apply_path(module, device_mesh, path, style)
    return module


def _apply_path(module, mesh, path: str, style) -> None:
    """PyTorch's walk of a plan key: its first dotted token matched (fnmatch) against the
    module's children, then the rest against each match's; a token nothing matches warns, as
    PyTorch's does, and that entry (for that branch) is skipped."""
    token, _, rest = path.partition(".")
    matched = [child for name, child in module.named_children() if fnmatch.fnmatch(name, token)]
    if not matched:
        warnings.warn(f"Parallelize plan key '{path}' could not be resolved: no submodule "
                      f"matching token '{token}' in module {module}, skipping this plan entry.",
                      stacklevel=3)
        return
    for child in matched:
        if rest:
            _apply_path(child, mesh, rest, style)
        else:
            style._apply(child, mesh)
