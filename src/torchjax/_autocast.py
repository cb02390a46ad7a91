"""Autocast's per-thread state and the cast it asks of each op (mixed precision).

torchjax.amp sets the state (autocast's __enter__/__exit__) and installs PyTorch's op lists
in POLICIES; the core never imports torchjax.amp, the lists are handed down as data.
While no autocast is on, dispatch reads one thread-local flag (STATE.on) and nothing else.
While one is, dispatch asks `compute_dtype` to adjust the row's compute dtype: the cast
then happens inside the row's pure function, so it is part of the tape node and of the
compiled program, and the backward differentiates through it: gradients reach each input
in that input's own dtype, as PyTorch's autocast casts are differentiable ops.
"""

from __future__ import annotations

import contextlib
import threading

import jax
import jax.numpy as jnp

from . import _dtypes
from ._tensor import Tensor

# what autocast does to a row's floating inputs, by policy name (PyTorch's CastPolicy):
#   "lower": float16/bfloat16/float32 inputs run in the autocast dtype (matmul, conv, ...)
#   "fp32": float16/bfloat16 inputs run in float32 (losses, reductions, linalg)
#   "fp32_opt": as "fp32" unless the call passes dtype= itself (softmax, sum on CUDA)
#   "promote": floating inputs run in the widest of them (cat, stack, index_copy)
# float64 inputs are never cast, as in PyTorch.
POLICIES: dict[str, dict[str, str]] = {}  # device type -> row name -> policy


class _State(threading.local):
    def __init__(self):
        # some device type is enabled in this thread: the only hot-path check (an instance
        # attribute: on a threading.local, a class attribute is the slower lookup)
        self.on = False
        self.enabled: dict[str, _dtypes.dtype] = {}  # device type -> its autocast dtype
        self.dtypes = {"cpu": _dtypes.bfloat16, "cuda": _dtypes.float16,
                       "tpu": _dtypes.bfloat16, "xla": _dtypes.bfloat16}
        self.cache_enabled = True
        self.nesting = 0
        self.key = None  # (device type, dtype name) pairs enabled: compile's guard reads it


STATE = _State()


def default_dtype(device_type: str) -> _dtypes.dtype:
    return STATE.dtypes.get(device_type, _dtypes.float16)


def set_dtype(device_type: str, dtype: _dtypes.dtype) -> None:
    STATE.dtypes[device_type] = dtype
    if device_type in STATE.enabled:
        STATE.enabled[device_type] = dtype
        _refresh()


def is_enabled(device_type: str) -> bool:
    return device_type in STATE.enabled


def set_enabled(device_type: str, enabled: bool) -> None:
    if enabled:
        STATE.enabled[device_type] = default_dtype(device_type)
    else:
        STATE.enabled.pop(device_type, None)
    _refresh()


def snapshot():
    """The autocast state of this thread, for code that re-runs a region later
    (checkpoint's recomputation runs it under the state its forward had, as PyTorch's does)."""
    return dict(STATE.enabled), dict(STATE.dtypes)


@contextlib.contextmanager
def restored(state):
    """Run a block under a snapshot() of the autocast state."""
    saved = snapshot()
    STATE.enabled, STATE.dtypes = dict(state[0]), dict(state[1])
    _refresh()
    try:
        yield
    finally:
        STATE.enabled, STATE.dtypes = saved
        _refresh()


def _refresh():
    s = STATE
    s.on = bool(s.enabled)
    s.key = tuple(sorted((d, t.name) for d, t in s.enabled.items())) or None


class Cast:
    """The compute "dtype" of a row that promotes nothing itself (promote="none") under
    autocast: each floating, non-float64 tensor input is cast to `dtype`, as PyTorch's
    cached_cast does. One instance per dtype, so it keys the op caches by identity."""

    __slots__ = ("dtype",)
    is_floating_point = False  # keeps _from_result off: the backward re-runs the cast
    is_complex = False
    _all: dict = {}

    def __new__(cls, dtype):
        got = cls._all.get(dtype)
        if got is None:
            got = cls._all[dtype] = object.__new__(cls)
            got.dtype = dtype
        return got

    def __repr__(self):
        return f"autocast.Cast({self.dtype.name})"

    def _program_name(self) -> str:
        # all of its state: an op's program under autocast is named by it in the program
        # cache (_programs.describe), so a warm process loads it untraced
        return self.dtype.name

    def apply(self, v):
        if v is None or not hasattr(v, "dtype"):
            return v  # Python numbers are not tensors: autocast leaves them
        if v.dtype in _ELIGIBLE and v.dtype != self.dtype.np:
            return v.astype(self.dtype.np)
        return v


_BANNED = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional."
    "binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss.  "
    "binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")
_ELIGIBLE = frozenset(jnp.dtype(d) for d in (jnp.float16, jnp.bfloat16, jnp.float32))
_LOW = frozenset((_dtypes.float16, _dtypes.bfloat16))


# JAX platform -> torch device type (as _device names them), read straight off the array:
# building a torch device object per op would cost more than the cast decision itself
_PLATFORM = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}


def _first_device_type(dyn) -> str:
    for v in dyn:
        if isinstance(v, (list, tuple)):
            v = v[0] if v else None
        if isinstance(v, Tensor):
            try:
                platform = next(iter(v._data.devices())).platform
            except Exception:  # a tracer or a meta array: the default device's type
                break
            return _PLATFORM.get(platform, platform)
    platform = jax.devices()[0].platform
    return _PLATFORM.get(platform, platform)


def compute_dtype(op, dyn, stat, cd):
    """The compute dtype of this call of row `op` under the active autocast(s): `cd`
    (the row's own promotion result, a dtype or None) adjusted by the row's policy."""
    enabled = STATE.enabled
    device = None
    policy = None
    if len(enabled) == 1:
        (device,) = enabled
        policy = POLICIES.get(device, {}).get(op.name)
        if policy is None:
            return cd
        if _first_device_type(dyn) != device:
            return cd
    else:
        device = _first_device_type(dyn)
        if device not in enabled:
            return cd
        policy = POLICIES.get(device, {}).get(op.name)
        if policy is None:
            return cd
    low = enabled[device]
    if policy == "banned":
        raise RuntimeError(_BANNED)
    if policy == "fp32_opt":
        if dict(zip(op.statics, stat)).get("dtype") is not None:
            return cd  # an explicit dtype= wins, as in PyTorch
        policy = "fp32"
    if cd is not None and not isinstance(cd, Cast):
        # the row casts every input to cd itself: choosing cd is the whole cast
        new = cd
        if policy == "lower" and cd.is_floating_point and cd is not _dtypes.float64:
            new = low
        elif policy == "fp32" and cd in _LOW:
            new = _dtypes.float32
        # a row that differentiates from its result (exp) would hand back a gradient in the
        # result's dtype; as a Cast the backward re-runs the cast and the input gets its own
        return Cast(new) if new is not cd and op.result_grad is not None else new
    if policy == "lower":
        return Cast(low)
    if policy == "fp32":
        return Cast(_dtypes.float32)
    # promote: float32 wins over the low dtype; float64 inputs are left alone
    widest = low
    for v in dyn:
        for x in (v if isinstance(v, (list, tuple)) else (v,)):
            data = getattr(x, "_data", None)
            if data is not None and data.dtype in _ELIGIBLE and data.dtype != low.np:
                widest = _dtypes.float32
    return Cast(widest)


def as_cast(cd, dyn):
    """The arguments as the row's function will see them under autocast (for a row's
    value checks, which read Tensors): eligible tensors cast by a Cast, others as given."""
    if not isinstance(cd, Cast):
        return dyn
    def one(v):
        if isinstance(v, Tensor):
            new = cd.apply(v._data)
            return v if new is v._data else Tensor._wrap(new)
        return v
    return tuple(type(v)(one(x) for x in v) if isinstance(v, (list, tuple)) else one(v)
                 for v in dyn)


class _Named:
    __slots__ = ("name", "statics", "result_grad")

    def __init__(self, name):
        self.name, self.statics, self.result_grad = name, (), None


def cast_tensors(name: str, *tensors):
    """For a composite that checks its inputs' dtypes in Python before it reaches its row
    (index_copy): the tensors as autocast would cast them for row `name`, through
    differentiable `.to()` calls. Only called while STATE.on."""
    cd = compute_dtype(_Named(name), tensors, (), None)
    if not isinstance(cd, Cast):
        return tensors
    return tuple(t.to(cd.dtype) if isinstance(t, Tensor) and t._data.dtype in _ELIGIBLE
                 else t for t in tensors)
