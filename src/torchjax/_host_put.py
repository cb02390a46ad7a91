"""A NumPy array onto the default device, uncommitted: what `jax.device_put(array)` gives.

jax.device_put goes through JAX's Python placement logic (shardings, copy semantics,
deferred arguments) before its C++ transfer: ~18-40 us for a 16-element array, where the
transfer itself takes ~4 us. Code that makes many small tensors on the host pays it per
tensor: a Dataset's __getitem__ building samples with torch.tensor/zeros (makemore's spends
~3 of them per name), the DataLoader's collate, every one-off array of _one_off. For the
common case (one process, a plain ndarray whose dtype JAX keeps as is) `put` calls the
transfer directly with the device and the uncommitted flag jax.device_put would use;
anything else, or a JAX whose internals moved, takes jax.device_put.
"""

from __future__ import annotations

import jax
import numpy as np

try:
    from jax._src import core as _core
    from jax._src import dtypes as _dtypes
    from jax._src.interpreters import pxla as _pxla
    from jax._src.lib import xla_client as _xc
    from jax.sharding import SingleDeviceSharding as _Single

    _transfer = _xc.batched_device_put
    _default_device = _pxla.get_default_device
    _abstract = _core.shaped_abstractify
    _canonical = _dtypes.canonicalize_dtype
except (ImportError, AttributeError):  # pragma: no cover - JAX's internals moved
    _transfer = None

# XLA:CPU's buffer alignment: a transfer takes an ndarray aligned so as the device buffer
# (no copy) and copies any other (NumPy's own allocations are 16-byte aligned)
ALIGN = 64

_SHARDINGS: dict = {}  # device -> its SingleDeviceSharding
_AVALS: dict = {}      # (shape, dtype) -> the aval JAX makes for such an array
_ONE_PROCESS = [None]  # whether this is a single-process run (asked once)


def put(arr):
    """`jax.device_put(arr)` for a NumPy array (or anything it takes)."""
    if (_transfer is not None and arr.__class__ is np.ndarray
            and _canonical(arr.dtype) == arr.dtype and _single_process()):
        try:
            key = (arr.shape, arr.dtype)
            aval = _AVALS.get(key)
            if aval is None:
                if len(_AVALS) >= 4096:
                    _AVALS.clear()
                aval = _AVALS[key] = _abstract(arr)
            return transfer(arr, aval, _default_device(), False)
        except Exception:  # noqa: BLE001  (whatever JAX's internals say: its public path)
            pass
    return jax.device_put(arr)


def transfer(arr, aval, device, committed: bool):
    """A C-contiguous NumPy array of type `aval` onto `device` by JAX's transfer call
    (committed or not, as jax.device_put would make it); only where `_transfer` exists."""
    sharding = _SHARDINGS.get(device)
    if sharding is None:
        sharding = _SHARDINGS[device] = _Single(device)
    return _transfer(aval, sharding, [arr], [device], committed)


def aligned_buffer(nbytes: int):
    """(owner, byte offset): an uninitialised buffer of nbytes starting ALIGN-aligned."""
    raw = np.empty(nbytes + ALIGN, np.uint8)
    return raw, (-raw.ctypes.data) % ALIGN


def aligned_copy(array):
    """A C-contiguous copy of `array` in ALIGN-aligned memory (which a transfer aliases)."""
    raw, off = aligned_buffer(array.nbytes)
    out = np.ndarray(array.shape, array.dtype, buffer=raw, offset=off)
    np.copyto(out, array)
    return out


def _single_process() -> bool:
    one = _ONE_PROCESS[0]
    if one is None:
        # (across processes device_put has more to check; asked once the backend is up)
        one = _ONE_PROCESS[0] = jax.process_count() == 1
    return one
