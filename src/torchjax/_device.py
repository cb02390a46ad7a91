"""PyTorch device names mapped onto jax.devices()."""

from __future__ import annotations

import functools

import jax

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
        if type not in _PLATFORM:
            raise RuntimeError(
                f"Expected one of cpu, cuda, tpu device type at start of device string: {type}")
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


def device_of(arr) -> device:
    """Device of a jax array (tracers and sharded arrays report their first device)."""
    try:
        devs = arr.devices()
    except Exception:  # a tracer: report the default device
        return from_jax(jax.devices()[0])
    return from_jax(next(iter(devs)))


def device_count(type_: str) -> int:
    return len(_platform_devices(_PLATFORM[type_]))
