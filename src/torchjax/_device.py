"""PyTorch device names mapped onto jax.devices(); the default device of factories."""

from __future__ import annotations

import functools
import threading

import jax

from . import _meta

# torch's device type -> JAX's platform name
_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}
_TYPE = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}


class device:
    """torch.device: a device type ("cpu", "cuda", "tpu") and an optional index."""

    __slots__ = ("type", "index")

    def __init__(self, type, index: int | None = None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):
            type, index = _default_accelerator(), type
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string or an int, got {type!r}")
        if ":" in type:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _PLATFORM and type != "meta":
            raise RuntimeError(
                f"Expected one of cpu, cuda, tpu, meta device type at start of device string: "
                f"{type}")
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    # `with torch.device(d):` makes d the device of factories called without one
    def __enter__(self):
        _DEFAULT.stack.append(self)
        return self

    def __exit__(self, *exc):
        _DEFAULT.stack.pop()


def _default_accelerator() -> str:
    return _TYPE.get(jax.default_backend(), "cpu")


@functools.cache
def _platform_devices(platform: str) -> tuple:
    try:
        return tuple(jax.devices(platform))
    except RuntimeError:
        return ()


def jax_device(d) -> jax.Device:
    """The jax.Device behind a torch device spec; a clear error when it is not present."""
    d = device(d) if not isinstance(d, device) else d
    if d.type == "meta":
        raise RuntimeError("the meta device holds no data: it has no JAX device")
    devs = _platform_devices(_PLATFORM[d.type])
    if not devs:
        raise RuntimeError(
            f"device '{d}' is not available: JAX sees only "
            f"{sorted({x.platform for x in jax.devices()})} devices. "
            f"Install the JAX build for that accelerator or use device='cpu'.")
    i = d.index or 0
    if i >= len(devs):
        raise RuntimeError(f"device '{d}' is not available: there are {len(devs)} "
                           f"{d.type} devices (valid indices 0..{len(devs) - 1})")
    return devs[i]


def from_jax(dev: jax.Device) -> device:
    """The torch device of a jax.Device; CPU prints without an index, as in PyTorch."""
    t = _TYPE.get(dev.platform, dev.platform)
    if t == "cpu":
        return _CPU
    return device(t, _platform_devices(_PLATFORM[t]).index(dev))


_CPU = device("cpu")
META = device("meta")


def device_of(arr) -> device:
    """Device of a jax array (tracers and sharded arrays report their first device)."""
    if _meta.is_meta(arr):
        return META
    try:
        devs = arr.devices()
    except Exception:  # a tracer: report the default device
        return from_jax(jax.devices()[0])
    return from_jax(next(iter(devs)))


def is_meta(d) -> bool:
    """Whether the device spec d (a device, a string or None) is the meta device."""
    if d is None:
        return False
    if isinstance(d, device):
        return d.type == "meta"
    return isinstance(d, str) and d.split(":")[0] == "meta"


# -- the default device of factories ---------------------------------------------------------

class _Default(threading.local):
    """Per thread, as PyTorch's: `with torch.device(...)` entries over the device
    set_default_device chose (None: JAX's default placement)."""

    def __init__(self):
        self.stack: list = []
        self.base: device | None = None


_DEFAULT = _Default()


def default_device() -> device | None:
    """The device factories use when given none; None leaves placement to JAX."""
    d = _DEFAULT
    return d.stack[-1] if d.stack else d.base


def set_default_device(d) -> None:
    """torch.set_default_device: the device factories use when given none (None resets)."""
    _DEFAULT.base = None if d is None else device(d) if not isinstance(d, device) else d


def get_default_device() -> device:
    """torch.get_default_device: the device factories use when given none."""
    d = default_device()
    if d is not None:
        return device(d) if not isinstance(d, device) else d
    return from_jax(jax.devices()[0])


def device_count(type_: str) -> int:
    return len(_platform_devices(_PLATFORM[type_]))
