"""Which 64-bit dtypes a device keeps: PyTorch's int64 and float64 on TPUs and GPUs.

TPUs have no native float64 and emulate int64 with pairs of 32-bit words. PyTorch/XLA's
answer is known to its users: `XLA_USE_32BIT_LONG=1` stores `torch.long` tensors as 32-bit
integers while PyTorch's dtype is still what the program sees. torchjax keeps one policy per
JAX platform ("cpu", "gpu", "tpu"):

- long: "int64" keeps int64 arrays; "int32" stores a torch.int64 tensor's array as int32 and
  tags the tensor, so `t.dtype` still says torch.int64 (and numpy() gives int64);
- double: "keep" keeps float64 / complex128; "error" refuses them with an error naming the
  policy (a float64 that silently became float32 would change results without a word).

Defaults: TPU stores longs as int32 and refuses float64; GPU and CPU keep both. The
environment variable XLA_USE_32BIT_LONG (PyTorch/XLA's name; read at import) turns 32-bit
longs on ("1") or off ("0") for every accelerator; `set_dtype_policy` changes one platform
(tests force it on for "cpu").

Where it acts (only while some platform's policy differs from "int64"/"keep": `STATE.on`):
- factories (_creation._finish): a new tensor on such a device is narrowed (after a range
  check: a value that does not fit in int32 raises) or refused;
- every op's results (a _result_hooks hook, run by _dispatch.dispatch): an int64 result on
  such a device is narrowed and tagged; an int32 result is tagged when an input was a tagged
  long (PyTorch's promotion gives int64 there), except for an explicit cast; `.to(device)` widens back to int64 when
  the target keeps int64. In-place ops keep the tensor's storage dtype.
Inside an op the computation follows PyTorch's promotion (an int64 input is widened in the
op's program), so values are PyTorch's; storage and transfers are 32-bit. Results of an op
that overflow int32 wrap, as with PyTorch/XLA's flag.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtypes, _result_hooks

__all__ = ["set_dtype_policy", "get_dtype_policy"]

_LONG = ("int64", "int32")
_DOUBLE = ("keep", "error")
_INT32 = np.dtype(np.int32)
_INT64 = np.dtype(np.int64)
_WIDE_FLOATS = (np.dtype(np.float64), np.dtype(np.complex128))
_CASTS = frozenset({"_to_dtype"})  # ops whose int32 result is int32 because it was asked for


class _State:
    on = False  # some platform narrows longs or refuses doubles: the hooks have work to do
    policy: dict = {}
    settled = False  # `on` was checked against the platforms this process has


STATE = _State()


def _defaults() -> dict:
    policy = {"cpu": ("int64", "keep"), "gpu": ("int64", "keep"), "tpu": ("int32", "error")}
    env = os.environ.get("XLA_USE_32BIT_LONG")
    if env is not None:
        long = "int32" if env.strip().lower() in ("1", "true", "yes") else "int64"
        policy["gpu"] = (long, policy["gpu"][1])
        policy["tpu"] = (long, policy["tpu"][1])
    return policy


def _refresh() -> None:
    # which platforms this process has is known only once JAX's backend starts (importing
    # torchjax must not start it): until the first hook call, assume any of them may be here
    STATE.on = any(p != ("int64", "keep") for p in STATE.policy.values())
    STATE.settled = False
    (_result_hooks.install if STATE.on else _result_hooks.uninstall)(after_op)


def _settle() -> None:
    """Turn the hooks off when no platform of this process has a policy (a CPU-only or GPU
    machine with the defaults: only TPUs narrow): ops then pay nothing."""
    STATE.settled = True
    here = set()
    for name, policy in STATE.policy.items():
        if policy != ("int64", "keep"):
            try:
                if jax.devices(name):
                    here.add(name)
            except RuntimeError:  # no such backend here
                pass
    if not here:
        STATE.on = False
        _result_hooks.uninstall(after_op)


def set_dtype_policy(platform: str, *, long: str | None = None,
                     double: str | None = None) -> None:
    """The 64-bit policy of one JAX platform ("cpu", "gpu", "tpu"); None keeps a setting.

    Example::

        set_dtype_policy("gpu", long="int32")       # torch.long stored as int32 on GPUs
        set_dtype_policy("tpu", double="error")     # float64 refused on TPUs (the default)
    """
    platform = {"cuda": "gpu"}.get(platform, platform)
    if platform not in ("cpu", "gpu", "tpu"):
        raise ValueError(f"set_dtype_policy: unknown platform {platform!r}; use 'cpu', 'gpu' "
                         f"or 'tpu'")
    old_long, old_double = STATE.policy.get(platform, ("int64", "keep"))
    if long is not None and long not in _LONG:
        raise ValueError(f"set_dtype_policy: long={long!r}; use one of {_LONG}")
    if double is not None and double not in _DOUBLE:
        raise ValueError(f"set_dtype_policy: double={double!r}; use one of {_DOUBLE}")
    STATE.policy[platform] = (long or old_long, double or old_double)
    _refresh()


def get_dtype_policy(platform: str) -> dict:
    """{"long": "int64" | "int32", "double": "keep" | "error"} for one platform."""
    long, double = STATE.policy.get({"cuda": "gpu"}.get(platform, platform), ("int64", "keep"))
    return {"long": long, "double": double}


# -- the hooks -----------------------------------------------------------------------------------

def _platform(arr) -> str:
    try:
        return next(iter(arr.devices())).platform
    except Exception:  # a traced value: it runs where JAX's default backend is
        return jax.default_backend()


def _policy(arr) -> tuple:
    return STATE.policy.get(_platform(arr), ("int64", "keep"))


def _refuse(arr, where: str) -> None:
    kind = _platform(arr)
    name = "float64" if np.dtype(arr.dtype) == np.float64 else "complex128"
    raise RuntimeError(
        f"{where}: torch.{name} is not supported on this {kind.upper()} device under torchjax's "
        f"device dtype policy (double='error'); use float32, keep the tensor on the CPU, or "
        f"torchjax.backends.xla.set_dtype_policy({kind!r}, double='keep')")


def is_long32(t) -> bool:
    """Whether t is a torch.int64 tensor stored as int32 by the policy."""
    return t.__dict__.get("_long32", False)


def reported(t, d):
    """The dtype t reports when its array is int32 (the dtype property's hook)."""
    return _dtypes.int64 if t.__dict__.get("_long32", False) else d


def on_create(t):
    """A factory's new tensor, narrowed or refused as its device's policy says."""
    if not STATE.settled:
        _settle()
    arr = t._data
    dt = np.dtype(arr.dtype)
    if dt == _INT64:
        long, _ = _policy(arr)
        if long == "int32":
            if not isinstance(arr, jax.core.Tracer) and arr.size:
                lo, hi = int(jnp.min(arr)), int(jnp.max(arr))
                info = np.iinfo(np.int32)
                if lo < info.min or hi > info.max:
                    raise RuntimeError(
                        f"value {lo if lo < info.min else hi} cannot be converted to type "
                        f"int32 without overflow: torch.long is stored as int32 on this "
                        f"device (device dtype policy long='int32')")
            t._data = arr.astype(_INT32)
            t._long32 = True
    elif dt in _WIDE_FLOATS and _policy(arr)[1] == "error":
        _refuse(arr, "tensor creation")
    return t


def _tensors(obj, out: list) -> list:
    # duck-typed: the Tensor class imports this module
    if hasattr(obj, "_requires_grad") and hasattr(obj, "_data"):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors(o, out)
    return out


def after_op(name: str, dyn: tuple, result):
    """An op's result(s), with the policy applied (dispatch's hook)."""
    if not STATE.settled:
        _settle()
    outs = _tensors(result, [])
    ins = _tensors(dyn, [])
    # PyTorch's promotion: a 0-d tensor decides only when no dimensioned tensor takes part
    pool = [a for a in ins if a.ndim] or ins
    longs = any(a.__dict__.get("_long32", False) for a in pool)
    for t in outs:
        arr = t._data
        dt = np.dtype(arr.dtype)
        if dt == _INT64:
            if _policy(arr)[0] == "int32":
                t._data = arr.astype(_INT32)
                t._long32 = True
        elif dt == _INT32:
            if name == "_to_device" and longs and _policy(arr)[0] == "int64":
                t._data = arr.astype(_INT64)  # moved to a device that keeps int64
            elif name not in _CASTS and longs:
                t._long32 = True
        elif dt in _WIDE_FLOATS and _policy(arr)[1] == "error":
            _refuse(arr, f"torch.{name.lstrip('_')}")
    return result


def storage_dtype(t, d):
    """The dtype an in-place op writes into t: its array's (int32 for a stored long)."""
    return _dtypes.int32 if t.__dict__.get("_long32", False) else d


def to_host(t, a: np.ndarray) -> np.ndarray:
    """numpy() of t: int64, as PyTorch gives, for a long stored as int32."""
    return a.astype(np.int64) if t.__dict__.get("_long32", False) else a


STATE.policy = _defaults()
_refresh()
