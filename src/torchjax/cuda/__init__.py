"""torchjax.cuda: the GPUs JAX sees, as PyTorch's torch.cuda reports them.

Without a GPU, is_available() is False, device_count() 0, the memory counters 0 and the
cache / seed / synchronize calls do nothing harmful; calls that describe a particular GPU
(get_device_name, get_device_properties, ...) raise, saying no GPU is available.
"""

from __future__ import annotations

from types import SimpleNamespace

from .. import _device
from .._errors import OutOfMemoryError  # torch.cuda.OutOfMemoryError is torch.OutOfMemoryError

__all__ = ["is_available", "device_count", "current_device", "set_device", "device",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "synchronize",
           "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "memory_stats", "get_device_name", "get_device_properties", "get_device_capability",
           "is_bf16_supported", "is_initialized", "init", "amp", "OutOfMemoryError"]


def is_available() -> bool:
    """Whether JAX sees at least one GPU (a CUDA or ROCm build of jaxlib is installed and finds one).

    See https://pytorch.org/docs/stable/generated/torch.cuda.is_available.html.
    """
    return _device.device_count("cuda") > 0


def device_count() -> int:
    """How many GPUs JAX sees (`jax.devices('gpu')`).

    See https://pytorch.org/docs/stable/generated/torch.cuda.device_count.html.
    """
    return _device.device_count("cuda")


def is_initialized() -> bool:
    """Whether a GPU is available (JAX starts its backends when first used).

    See https://pytorch.org/docs/stable/generated/torch.cuda.is_initialized.html.
    """
    return is_available()


def init() -> None:
    """JAX starts its backends on first use; there is nothing to do ahead of it."""


def _gpu(device=None):
    """The jax.Device for a torch.cuda device argument (None: GPU 0); raises without GPUs."""
    if not is_available():
        raise RuntimeError("no CUDA GPU is available: JAX sees no GPU (install JAX's CUDA "
                           "build, or check torch.cuda.is_available() first)")
    if device is None:
        device = 0
    if isinstance(device, int):
        device = _device.device("cuda", device)
    return _device.jax_device(device)


def current_device() -> int:
    """The index of the current GPU: always 0 here (JAX has no current-device state); raises when JAX sees no GPU.

    See https://pytorch.org/docs/stable/generated/torch.cuda.current_device.html.
    """
    if not is_available():
        raise RuntimeError("No CUDA GPUs are available")
    return 0


def set_device(device) -> None:
    """Checks the device exists; tensors go where `.to(device)` / `device=` put them."""
    _gpu(device)


def manual_seed(seed) -> None:
    """GPU generators share the default generator here; seeding it is enough."""
    from .._random import manual_seed as _seed
    _seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    """Reseeds torchjax's one random generator from a non-deterministic seed (GPUs share it with the CPU).

    See https://pytorch.org/docs/stable/generated/torch.cuda.seed.html.
    """
    from .._random import seed as _seed
    _seed()


seed_all = seed


def initial_seed() -> int:
    """The seed of torchjax's one random generator (GPUs share it with the CPU).

    See https://pytorch.org/docs/stable/generated/torch.cuda.initial_seed.html.
    """
    from .._random import initial_seed as _initial_seed
    return _initial_seed()


def synchronize(device=None) -> None:
    """Waits until every live JAX array is computed (JAX dispatches asynchronously; there are no CUDA streams).

    See https://pytorch.org/docs/stable/generated/torch.cuda.synchronize.html.
    """
    import jax
    for d in jax.live_arrays():
        d.block_until_ready()


def empty_cache() -> None:
    """XLA's allocator keeps its memory pool; there is no cache to hand back."""


def memory_stats(device=None) -> dict:
    """The GPU allocator's counters as JAX reports them ({} without a GPU)."""
    if not is_available():
        return {}
    return dict(_gpu(device).memory_stats() or {})


def memory_allocated(device=None) -> int:
    """Bytes in use on the GPU now, from JAX's memory statistics (0 where JAX reports none).

    See https://pytorch.org/docs/stable/generated/torch.cuda.memory_allocated.html.
    """
    return int(memory_stats(device).get("bytes_in_use", 0))


def max_memory_allocated(device=None) -> int:
    """Peak bytes in use on the GPU, from JAX's memory statistics (0 where JAX reports none, as on the CPU).

    See https://pytorch.org/docs/stable/generated/torch.cuda.max_memory_allocated.html.
    """
    return int(memory_stats(device).get("peak_bytes_in_use", 0))


def memory_reserved(device=None) -> int:
    """Bytes the allocator holds on the GPU, from JAX's memory statistics (falls back to the bytes in use).

    See https://pytorch.org/docs/stable/generated/torch.cuda.memory_reserved.html.
    """
    stats = memory_stats(device)
    return int(stats.get("bytes_reserved", stats.get("bytes_in_use", 0)))


max_memory_reserved = memory_reserved


def reset_peak_memory_stats(device=None) -> None:
    """JAX's peak counter cannot be reset; accepted so scripts run."""


reset_max_memory_allocated = reset_peak_memory_stats


def get_device_name(device=None) -> str:
    """The GPU's name as JAX reports it (its `device_kind`).

    See https://pytorch.org/docs/stable/generated/torch.cuda.get_device_name.html.
    """
    return _gpu(device).device_kind


def get_device_capability(device=None) -> tuple[int, int]:
    """The GPU's compute capability as (major, minor), as JAX reports it.

    See https://pytorch.org/docs/stable/generated/torch.cuda.get_device_capability.html.
    """
    cc = getattr(_gpu(device), "compute_capability", None)
    if cc is None:
        raise RuntimeError("JAX does not report this GPU's compute capability")
    major, _, minor = str(cc).partition(".")
    return int(major), int(minor or 0)


def get_device_properties(device=None):
    """name, total_memory and major/minor of a GPU, from what JAX reports."""
    d = _gpu(device)
    stats = d.memory_stats() or {}
    try:
        major, minor = get_device_capability(device)
    except RuntimeError:
        major = minor = 0
    return SimpleNamespace(name=d.device_kind, total_memory=int(stats.get("bytes_limit", 0)),
                           major=major, minor=minor,
                           multi_processor_count=int(getattr(d, "core_count", 0) or 0))


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True whenever a GPU is available: XLA emulates bfloat16 where the hardware lacks it.

    See https://pytorch.org/docs/stable/generated/torch.cuda.is_bf16_supported.html.
    """
    return is_available()


class device:
    """`with torch.cuda.device(i):` checks GPU i exists; placement is by `.to(device)`."""

    def __init__(self, device):
        self.idx = device
        _gpu(device)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


from .._legacy_types import CUDA as _LEGACY_TYPES  # noqa: E402
from . import amp  # noqa: E402

globals().update(_LEGACY_TYPES)  # torch.cuda.FloatTensor, ...
