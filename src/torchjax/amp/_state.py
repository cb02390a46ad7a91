"""torch.is_autocast_enabled, get_autocast_dtype and the other autocast state functions.

The state itself lives in the core (torchjax._autocast) so that dispatch can read it
without importing torchjax.amp; these are PyTorch's public spellings of it.
"""

from __future__ import annotations

import warnings

from .. import _autocast, _dtypes

__all__ = [
    "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype",
    "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
    "is_autocast_xla_enabled", "set_autocast_xla_enabled", "get_autocast_xla_dtype",
    "set_autocast_xla_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
    "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
    "is_autocast_ipu_enabled", "set_autocast_ipu_enabled", "get_autocast_ipu_dtype",
    "set_autocast_ipu_dtype",
]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for device_type (no argument: CUDA, as in PyTorch)."""
    return _autocast.is_enabled("cuda" if device_type is None else device_type)


def set_autocast_enabled(device_type, enabled=None) -> None:
    """set_autocast_enabled(device_type, enabled), or the older set_autocast_enabled(enabled)
    for CUDA."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _autocast.set_enabled(device_type, bool(enabled))


def get_autocast_dtype(device_type: str) -> _dtypes.dtype:
    return _autocast.default_dtype(device_type)


def set_autocast_dtype(device_type: str, dtype) -> None:
    _autocast.set_dtype(device_type, _dtypes.to_dtype(dtype))


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return _autocast.is_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)")
    _autocast.set_enabled("cpu", bool(enabled))


def get_autocast_cpu_dtype() -> _dtypes.dtype:
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return _autocast.default_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> _dtypes.dtype:
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')")
    return _autocast.default_dtype("cuda")


def set_autocast_gpu_dtype(dtype) -> None:
    _deprecated("set_autocast_gpu_dtype", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_xla_enabled() -> bool:
    _deprecated("is_autocast_xla_enabled", "is_autocast_enabled('xla')")
    return _autocast.is_enabled("xla")


def set_autocast_xla_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_xla_enabled", "set_autocast_enabled('xla', enabled)")
    _autocast.set_enabled("xla", bool(enabled))


def get_autocast_xla_dtype() -> _dtypes.dtype:
    _deprecated("get_autocast_xla_dtype", "get_autocast_dtype('xla')")
    return _autocast.default_dtype("xla")


def set_autocast_xla_dtype(dtype) -> None:
    _deprecated("set_autocast_xla_dtype", "set_autocast_dtype('xla', dtype)")
    set_autocast_dtype("xla", dtype)


def is_autocast_cache_enabled() -> bool:
    return _autocast.STATE.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Recorded for PyTorch's API; torchjax keeps no cast cache (XLA fuses each cast into the
    op that reads it, so there is nothing to reuse between ops)."""
    _autocast.STATE.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Nothing to clear: see set_autocast_cache_enabled."""


def autocast_increment_nesting() -> int:
    _autocast.STATE.nesting += 1
    return _autocast.STATE.nesting


def autocast_decrement_nesting() -> int:
    _autocast.STATE.nesting -= 1
    return _autocast.STATE.nesting


# the IPU spellings, deprecated in PyTorch with messages that name the arguments
def _deprecated_call(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_ipu_enabled() -> bool:
    _deprecated_call("is_autocast_ipu_enabled()", "is_autocast_enabled('ipu')")
    return _autocast.is_enabled("ipu")


def set_autocast_ipu_enabled(enabled: bool) -> None:
    _deprecated_call("set_autocast_ipu_enabled(enabled)", "set_autocast_enabled('ipu', enabled)")
    _autocast.set_enabled("ipu", bool(enabled))


def get_autocast_ipu_dtype() -> _dtypes.dtype:
    _deprecated_call("get_autocast_ipu_dtype()", "get_autocast_dtype('ipu')")
    return _autocast.default_dtype("ipu")


def set_autocast_ipu_dtype(dtype) -> None:
    _deprecated_call("set_autocast_ipu_dtype(dtype)", "set_autocast_dtype('ipu', dtype)")
    set_autocast_dtype("ipu", dtype)
