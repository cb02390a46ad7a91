"""torchjax.mps: Apple's Metal GPUs, which torchjax (on JAX) does not drive; this module
answers as PyTorch's builds without MPS do (torch.backends.mps.is_available() is False there
too), so a script that checks for it and falls back runs.

device_count() is 0 and manual_seed does nothing; calls that need the device raise
PyTorch's "Cannot execute ... without MPS backend."
"""

from __future__ import annotations

__all__ = ["is_available", "device_count", "synchronize", "empty_cache", "manual_seed", "seed",
           "get_rng_state", "set_rng_state", "current_allocated_memory",
           "driver_allocated_memory", "recommended_max_memory",
           "set_per_process_memory_fraction"]


def is_available() -> bool:
    """False: torchjax has no MPS backend."""
    return False


def device_count() -> int:
    """0: torchjax has no MPS backend."""
    return 0


def _needs(what: str):
    def call(*args, **kwargs):
        raise RuntimeError(f"Cannot execute {what}() without MPS backend.")
    call.__name__ = what
    call.__doc__ = f"Raises: {what} needs the MPS backend, which torchjax has not."
    return call


synchronize = _needs("deviceSynchronize")
empty_cache = _needs("emptyCache")
get_rng_state = set_rng_state = seed = _needs("getDefaultGenerator")
current_allocated_memory = _needs("getCurrentAllocatedMemory")
driver_allocated_memory = _needs("getDriverAllocatedMemory")
recommended_max_memory = _needs("getRecommendedMaxMemory")
set_per_process_memory_fraction = _needs("setMemoryFraction")


def manual_seed(seed: int) -> None:
    """Nothing to seed without MPS (as PyTorch's builds without it)."""
