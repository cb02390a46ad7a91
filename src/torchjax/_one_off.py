"""Arrays of one-off shapes made on the host, without compiling a program for them.

Building a model makes each parameter shape once or twice: an `empty` to hold it, a cut of a
random draw to fill it, zeros for each optimizer moment. Each of those as an XLA program
costs 20-100 ms to compile (docs/performance.md, "Time to first step") and microseconds to
run, so for a shape met once it is all cost. NumPy makes the same array in microseconds and
JAX moves it to the device. A shape that keeps coming back (a loop making `torch.zeros(B, H)`
each step) gets its compiled program after `HOST_CALLS` calls, which is faster from then on.

Only outside any JAX trace: inside `torchjax.compile` or a `jax.jit` the jnp version is part
of the traced program, where it costs no compile of its own, while a host array would become
a constant (or, to torchjax.compile, a tensor from outside the step).
"""

from __future__ import annotations

import jax
import numpy as np

from ._host_put import put

try:
    from jax._src.core import trace_ctx as _trace_ctx

    def top_level() -> bool:
        return _trace_ctx.is_top_level()
except (ImportError, AttributeError):  # a JAX without it: always compile, as before
    def top_level() -> bool:
        return False

HOST_CALLS = 2
# A fill (zeros, ones, init.constant_) is cheaper still to make on the host (np.full and a
# copy, ~10 us for a small array) and its program is a 20-40 ms compile of a broadcast, so a
# shape gets it only after this many calls: a model builds many LayerNorms of one width (two
# fills each), an LSTM makes its zero state twice per forward.
FILL_CALLS = 16
# Larger arrays are filled on the device: a host buffer and a copy of this size (16 MB of
# float32) is about what a compile costs, and a GPU would wait for the transfer.
_HOST_MAX = 1 << 22
_calls: dict = {}
_CALLS_MAX = 4096  # bound the table: a program making ever-new shapes stays flat


def few(key, size: int, calls: int = HOST_CALLS) -> bool:
    """Whether to make this array on the host: outside traces, small, and `key` (the shape
    and whatever else picks the program) seen fewer than `calls` times before."""
    if size > _HOST_MAX or not top_level():
        return False
    n = _calls.get(key, 0)
    if n >= calls:
        return False
    if len(_calls) >= _CALLS_MAX:
        _calls.clear()
    _calls[key] = n + 1
    return True


def place(host: np.ndarray, sharding):
    """`host` (the same value on every process) on `sharding`. Over several processes (DDP's,
    FSDP's parameters) each process places its own pieces: jax.device_put would first check
    with a collective that every process passed the same value, a program traced on every
    run. The callers fill from a shape and a constant (an optimizer's state, zero
    gradients, backward's ones), the same on every process."""
    if not sharding.is_fully_addressable:
        return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])
    return jax.device_put(host, sharding)


def to_device(host: np.ndarray, like=None):
    """`host` as a jax array: beside `like` (its sharding, when it is committed to one), else
    on the default device, uncommitted, as a jitted factory's result would be."""
    if like is not None and getattr(like, "committed", False):
        return place(host, like.sharding)
    # (jnp.asarray would compile a `stage` program per shape in jax 0.10; device_put does not)
    return put(host)


def size_class(n: int) -> int:
    """The random draw that holds n values, cut to a one-off shape: 1024 * 16**k. Powers of 16,
    not of 2: each class is a sampler compile of about a second, each unused value costs
    nanoseconds."""
    bits = max(0, (n - 1).bit_length() - 10)
    return 1 << (10 + 4 * -(-bits // 4))
