"""torchjax.accelerator: PyTorch's device-generic accelerator API over the devices JAX sees.

The accelerator is the device type of JAX's default backend when that is not the CPU (a GPU
is "cuda", a TPU "tpu"); on a CPU-only JAX there is none, and, as in PyTorch, the calls that
need one raise "Cannot access accelerator device when none is available." Scripts written
for several backends start with `torch.accelerator.current_accelerator()` and fall back to
the CPU when it is None (pytorch/examples do).
"""

from __future__ import annotations

from . import _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index",
           "current_stream", "device_count", "device_index", "empty_cache",
           "get_memory_info", "is_available", "max_memory_allocated", "max_memory_reserved",
           "memory_allocated", "memory_reserved", "memory_stats", "reset_peak_memory_stats",
           "set_device_idx", "set_device_index", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available: bool = False) -> _device.device | None:
    """The accelerator's device type as a torch.device (`device(type='cuda')`), or None when
    JAX has only the CPU.

    See https://pytorch.org/docs/stable/generated/torch.accelerator.current_accelerator.html.
    """
    kind = _device._default_accelerator()
    if kind == "cpu" or _device.device_count(kind) == 0:
        return None
    return _device.device(kind)


def is_available() -> bool:
    """Whether JAX sees an accelerator (a GPU or a TPU) with at least one device.

    See https://pytorch.org/docs/stable/generated/torch.accelerator.is_available.html.
    """
    return current_accelerator() is not None


def device_count() -> int:
    """How many devices the accelerator has (0 without one).

    See https://pytorch.org/docs/stable/generated/torch.accelerator.device_count.html.
    """
    acc = current_accelerator()
    return 0 if acc is None else _device.device_count(acc.type)


def _accelerator() -> _device.device:
    acc = current_accelerator()
    if acc is None:
        raise RuntimeError(_NONE)
    return acc


def _device_of(device) -> _device.device:
    """The accelerator device a torch.accelerator `device` argument names (None: index 0)."""
    acc = _accelerator()
    if device is None:
        return _device.device(acc.type, 0)
    d = _device.device(acc.type, device) if isinstance(device, int) else _device.device(device)
    if d.type != acc.type:
        raise ValueError(f"{d.type} doesn't match the current accelerator {acc}.")
    _device.jax_device(d)  # a clear error for a device that is not there
    return d


def current_device_index() -> int:
    """The accelerator's current device: always 0 here (JAX keeps no current device; tensors
    go where `.to(device)` / `device=` put them).

    See https://pytorch.org/docs/stable/generated/torch.accelerator.current_device_index.html.
    """
    _accelerator()
    return 0


def set_device_index(device, /) -> None:
    """Checks that the device exists (placement is by `.to(device)` / `device=` here).

    See https://pytorch.org/docs/stable/generated/torch.accelerator.set_device_index.html.
    """
    _device_of(device)


current_device_idx = current_device_index
set_device_idx = set_device_index


class device_index:
    """`with torch.accelerator.device_index(i):` checks device i exists on entry; None does
    nothing."""

    def __init__(self, device, /):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            _device_of(self.idx)

    def __exit__(self, *exc):
        return False


def synchronize(device=None, /) -> None:
    """Waits until every live JAX array is computed (JAX dispatches asynchronously).

    See https://pytorch.org/docs/stable/generated/torch.accelerator.synchronize.html.
    """
    _device_of(device)
    import jax
    for a in jax.live_arrays():
        a.block_until_ready()


def current_stream(device=None, /):
    """JAX has no user-visible streams: there is none to return."""
    _device_of(device)
    raise RuntimeError("torch.accelerator.current_stream is not supported by torchjax: JAX "
                       "orders work without user-visible streams")


def empty_cache() -> None:
    """XLA's allocator keeps its memory pool; there is no cache to hand back."""
    _accelerator()


def memory_stats(device_index=None, /) -> dict:
    """The accelerator's allocator counters as JAX reports them."""
    return dict(_device.jax_device(_device_of(device_index)).memory_stats() or {})


def memory_allocated(device_index=None, /) -> int:
    """Bytes in use on the device now, from JAX's memory statistics."""
    return int(memory_stats(device_index).get("bytes_in_use", 0))


def max_memory_allocated(device_index=None, /) -> int:
    """Peak bytes in use on the device, from JAX's memory statistics."""
    return int(memory_stats(device_index).get("peak_bytes_in_use", 0))


def memory_reserved(device_index=None, /) -> int:
    """Bytes the allocator holds on the device (the bytes in use where JAX reports no pool)."""
    stats = memory_stats(device_index)
    return int(stats.get("bytes_reserved", stats.get("bytes_in_use", 0)))


max_memory_reserved = memory_reserved


def reset_peak_memory_stats(device_index=None, /) -> None:
    """JAX's peak counter cannot be reset; accepted so scripts run."""
    _device_of(device_index)


def get_memory_info(device_index=None, /) -> tuple[int, int]:
    """(free, total) bytes of the device, from JAX's memory statistics."""
    stats = memory_stats(device_index)
    total = int(stats.get("bytes_limit", 0))
    return total - int(stats.get("bytes_in_use", 0)), total
