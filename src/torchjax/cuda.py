"""torchjax.cuda: whether JAX sees GPUs, and how many."""

from . import _device


def is_available() -> bool:
    return _device.device_count("cuda") > 0


def device_count() -> int:
    return _device.device_count("cuda")


def current_device() -> int:
    if not is_available():
        raise RuntimeError("No CUDA GPUs are available")
    return 0


def manual_seed(seed) -> None:
    """GPU generators share the default generator here; seeding it is enough."""
    from ._random import manual_seed as _seed
    _seed(seed)


manual_seed_all = manual_seed


def synchronize(device=None) -> None:
    import jax
    for d in jax.live_arrays():
        d.block_until_ready()
