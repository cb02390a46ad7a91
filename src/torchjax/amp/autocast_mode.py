"""autocast: run PyTorch's listed ops in lower precision inside a region (context manager
and decorator).

Entering sets the per-thread state in torchjax._autocast; dispatch then casts the inputs of
each listed row (PyTorch's op lists, _op_lists.py) inside the row's own function, so the
casts are on the tape and in compiled programs. See docs/amp.md.
"""

from __future__ import annotations

import functools
import warnings

from .. import _autocast, _dtypes
from . import _op_lists
from ._state import (
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

_DEVICE_TYPES = ("cpu", "cuda", "tpu", "xpu", "mps", "hpu", "xla", "mtia")

for _device_type, _table in _op_lists.BY_DEVICE.items():
    _autocast.POLICIES[_device_type] = _op_lists.by_row(_table)


def is_autocast_available(device_type: str) -> bool:
    """Whether torchjax has autocast op lists for device_type (cpu, cuda, tpu, xla)."""
    return device_type in _op_lists.BY_DEVICE


def _device_missing(device_type: str) -> bool:
    """Autocast for a device this machine lacks warns and turns itself off, as PyTorch does
    for CUDA without a GPU, so `autocast("cuda")` scripts still run on CPU."""
    if device_type == "cpu":
        return False
    if device_type == "cuda":
        from .. import cuda
        return not cuda.is_available()
    import jax
    platform = {"tpu": "tpu", "xla": None}.get(device_type, "")
    if platform is None:  # torch_xla's name for whatever accelerator JAX runs on
        return False
    return platform == "" or not any(d.platform == platform for d in jax.devices())


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None).

    Inside the region, PyTorch's listed ops for device_type run in `dtype` (matmul, conv,
    linear, attention: bfloat16 by default on CPU, float16 on CUDA) or in float32 (losses,
    linalg, and on CUDA softmax, norms, exp/log), and gradients flow back in the inputs'
    own dtypes. Nesting and `enabled=False` regions work as in PyTorch.

        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = model(x)              # linear layers compute in bfloat16
        loss = loss_fn(y.float(), t)  # outside: float32 again
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'; expected one of {', '.join(_DEVICE_TYPES)}")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None \
            else _dtypes.to_dtype(dtype)
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else bool(cache_enabled)
        self._enabled = bool(enabled)
        if self._enabled and _device_missing(device_type):
            what = "CUDA GPU" if device_type == "cuda" else f"{device_type} device"
            warnings.warn(f"autocast: device_type {device_type!r} was asked for but no {what} "
                          f"is available; autocast is disabled", stacklevel=2)
            self._enabled = False
        if self._enabled and self.fast_dtype not in (_dtypes.bfloat16, _dtypes.float16):
            name = "CPU" if device_type == "cpu" else device_type.upper()
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                          f"torch.bfloat16, torch.float16 currently.", stacklevel=2)
            self._enabled = False

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


def _cast_inputs(value, dtype):
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.dtype is not _dtypes.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """For autograd.Function.forward: with cast_inputs, inside an enabled autocast the
    forward runs with autocast off and its floating inputs cast to cast_inputs; the
    autocast state is recorded on ctx for custom_bwd."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        ctx = args[0]
        ctx._fwd_used_autocast = is_autocast_enabled(device_type)
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None or not ctx._fwd_used_autocast:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_inputs(args, cast_inputs), **_cast_inputs(kwargs, cast_inputs))
    return forward


def custom_bwd(bwd=None, *, device_type: str):
    """For autograd.Function.backward: runs it under the autocast state its forward had."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(*args, **kwargs):
        ctx = args[0]
        enabled = getattr(ctx, "_fwd_used_autocast", False)
        dtype = getattr(ctx, "_dtype", None)
        if not enabled:
            return bwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=True, dtype=dtype):
            return bwd(*args, **kwargs)
    return backward
