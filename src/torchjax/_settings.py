"""Process-wide switches PyTorch scripts set at their start: deterministic algorithms, the
float32 matmul precision, thread counts.

XLA picks its kernels, precision and threads itself, so these are kept for the scripts that
set and read them and change no computation (as torch.backends' flags). On a GPU, XLA's own
switch for deterministic kernels is `XLA_FLAGS=--xla_gpu_deterministic_ops=true`, set before
JAX starts; its thread pool size is fixed when the CPU backend starts.
"""

from __future__ import annotations

import os
import warnings

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "set_num_threads", "get_num_threads",
           "set_num_interop_threads", "get_num_interop_threads", "set_warn_always",
           "is_warn_always_enabled"]

_state = {"deterministic": False, "warn_only": False, "matmul_precision": "highest",
          "threads": os.cpu_count() or 1, "interop_threads": os.cpu_count() or 1,
          "warn_always": False}
_DEBUG_MODES = ("default", "warn", "error")
_PRECISIONS = ("highest", "high", "medium")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    _state["deterministic"] = mode
    _state["warn_only"] = bool(warn_only) and mode


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      f"setFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    _state["matmul_precision"] = precision
    from .backends import cuda
    cuda.matmul.allow_tf32 = precision != "highest"  # PyTorch links the two


def get_float32_matmul_precision() -> str:
    return _state["matmul_precision"]


def _positive(n, name: str) -> int:
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def set_num_threads(n: int) -> None:
    _state["threads"] = _positive(n, "set_num_threads")


def get_num_threads() -> int:
    return _state["threads"]


def set_num_interop_threads(n: int) -> None:
    _state["interop_threads"] = _positive(n, "set_num_interop_threads")


def get_num_interop_threads() -> int:
    return _state["interop_threads"]


def set_warn_always(b, /) -> None:
    """Warnings PyTorch gives once per process are given every time while this is on (the
    sparse constructors' deprecation warnings here)."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _state["warn_always"] = b


def is_warn_always_enabled() -> bool:
    return _state["warn_always"]
