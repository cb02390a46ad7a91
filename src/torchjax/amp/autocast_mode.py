"""autocast: a context manager and decorator that is a no-op when disabled."""

from __future__ import annotations

import functools
import warnings

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

_DEVICE_TYPES = ("cpu", "cuda", "tpu", "xpu", "mps", "hpu", "xla", "mtia")


def is_autocast_available(device_type: str) -> bool:
    """False: torchjax has no autocast for any device yet."""
    return False


def _gpu_missing(device_type: str) -> bool:
    if device_type != "cuda":
        return False
    from .. import cuda
    return not cuda.is_available()


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None).

    enabled=False (or device_type="cuda" without a GPU, which warns) runs the block as it is;
    an enabled autocast raises NotImplementedError.
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"autocast: unknown device_type {device_type!r}; expected one "
                               f"of {', '.join(_DEVICE_TYPES)}")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        if self._enabled and _gpu_missing(device_type):
            warnings.warn("autocast: device_type 'cuda' was asked for but no CUDA GPU is "
                          "available; autocast is disabled", stacklevel=2)
            self._enabled = False
        if self._enabled:
            raise NotImplementedError(
                f"torch.autocast(device_type={device_type!r}) (automatic mixed precision) is "
                f"not supported by torchjax yet: pass enabled=False, or cast the model and "
                f"inputs to the lower precision yourself (model.to(torch.bfloat16))")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """For autograd.Function.forward under autocast; with autocast never on, `fwd` as it is."""
    if fwd is None:
        return lambda f: f
    return fwd


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """For autograd.Function.backward under autocast; with autocast never on, `bwd` as it is."""
    if bwd is None:
        return lambda f: f
    return bwd
