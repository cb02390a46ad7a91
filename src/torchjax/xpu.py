"""torchjax.xpu: Intel GPUs, which torchjax (on JAX) does not drive; this module answers as
PyTorch's builds without XPU support do, so a script that checks for one and falls back runs.

is_available() is False and device_count() 0; seeding, emptying the cache and the memory
counters do nothing (0); calls that need a device raise PyTorch's "Torch not compiled with
XPU enabled".
"""

from __future__ import annotations

__all__ = ["is_available", "device_count", "is_initialized", "init", "is_bf16_supported",
           "current_device", "set_device", "device", "get_device_name",
           "get_device_properties", "get_device_capability", "synchronize", "empty_cache",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "get_rng_state", "set_rng_state", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats"]

_NOT_COMPILED = "Torch not compiled with XPU enabled"


def is_available() -> bool:
    """False: torchjax has no XPU backend."""
    return False


def device_count() -> int:
    """0: torchjax has no XPU backend."""
    return 0


def is_initialized() -> bool:
    """False: there is no XPU backend to initialize."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: there is no XPU."""
    return False


def _no_xpu(*args, **kwargs):
    raise AssertionError(_NOT_COMPILED)


# calls that need a device fail as in PyTorch's builds without XPU
init = current_device = set_device = get_device_name = get_device_properties = _no_xpu
get_device_capability = synchronize = get_rng_state = initial_seed = _no_xpu


def _nothing(*args, **kwargs) -> None:
    """Nothing to do without an XPU (as PyTorch's builds without one)."""


empty_cache = manual_seed = manual_seed_all = seed = seed_all = set_rng_state = _nothing
reset_peak_memory_stats = _nothing


def _zero(device=None) -> int:
    """0 bytes: there is no XPU memory."""
    return 0


memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _zero


class device:
    """`torch.xpu.device(i)` is made (as PyTorch's); entering it fails, as in PyTorch's
    builds without XPU."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        raise NotImplementedError("PyTorch was compiled without XPU support")

    def __exit__(self, *exc) -> bool:
        return False
