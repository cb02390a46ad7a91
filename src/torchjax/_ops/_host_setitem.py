"""x[key] = value on the host, for small tensors no autograd records: a Dataset's
__getitem__ building a sample (`x[1:1 + n] = ix; y[n + 1:] = -1`).

As an XLA program, every new slice or value length is a new program (20-80 ms of compile:
makemore's names compiled three per name length in its first steps) and every write ~25 us
of dispatch. For an array on a CPU device the same write is a copy, a NumPy assignment and a
transfer, a few microseconds and no compile. On other devices the host round trip costs a
transfer each way, so there only a kind of write met for the first times (_one_off.few)
goes through the host; the rest compile as before.

Exactly the program's result: only basic keys (ints, slices, None), and values that NumPy
writes as XLA's convert would (the same dtype, or a Python number the target dtype holds
exactly).
"""

from __future__ import annotations

import numpy as np
from jax.sharding import SingleDeviceSharding as _Single

from .. import _dispatch, _one_off
from .._autograd import grad_mode
from .._device_dtypes import STATE as _DEVICE_DTYPES
from .._tensor import Tensor

_MAX = 1 << 16  # elements: beyond this a copy of the whole tensor costs more than the write
try:  # jax's concrete array class, named without making one (import must not start XLA)
    from jax._src.array import ArrayImpl as _ARRAY
except ImportError:  # pragma: no cover - moved in a newer jax: nothing goes this way
    _ARRAY = None
_NUMBERS = (bool, int, float)  # (and NumPy integers, by isinstance)
# targets a Python float converts to in one rounding both in NumPy and in XLA (half and
# bfloat16 may go through float32 in XLA: they take only floats they hold exactly)
_ONE_ROUNDING = frozenset(map(np.dtype, (np.float32, np.float64, np.complex64, np.complex128)))


def write(self: Tensor, value, k) -> bool:
    """Write `value` at the parsed basic key `k` on the host; False where the program path
    must (recorded writes, views, large or sharded tensors, inexact conversions)."""
    arr = self._data
    if (_ARRAY is None or arr.__class__ is not _ARRAY or self._base is not None or self._views
            or arr.size > _MAX or _dispatch.CAPTURE is not None or _DEVICE_DTYPES.on
            or arr.sharding.__class__ is not _Single or not _one_off.top_level()):
        return False
    grad_on = grad_mode.STATE.grad_enabled
    if grad_on and self._requires_grad:
        return False
    if isinstance(value, Tensor):
        v = value._data
        if (v.__class__ is not _ARRAY or v.dtype != arr.dtype or v.size > _MAX
                or (grad_on and value._requires_grad) or v.sharding != arr.sharding):
            return False
        src = np.asarray(v)
    elif value.__class__ in _NUMBERS or isinstance(value, np.integer):
        src = _exact(value, arr.dtype)
        if src is None:
            return False
    else:
        return False
    key = _numpy_key(k.spec)
    if key is None:
        return False
    if arr.sharding._device.platform != "cpu" and not _one_off.few(
            ("setitem", arr.shape, arr.dtype, k.spec, np.shape(src)), arr.size):
        return False
    host = np.array(arr)  # (a copy: the array's own buffer is XLA's, immutable)
    host[key] = src
    self._write(_one_off.to_device(host, arr))  # (beside arr when it is committed)
    return True


def assigns_itself(self: Tensor, value, k) -> bool:
    """`x[k] = x[k]`, the second half of `x[k] += v` (Python's augmented assignment on an
    index): the in-place op already wrote through the view x[k] into x, and a live view
    holds its base's values, so the write would put back what is there. Only the version
    moves, as PyTorch's copy moves it. (makemore's bigram counts, `N[ix1, ix2] += 1` over
    every pair of every name, spent a third of each step in this copy.) Writes that autograd
    records, traced ones and checkpoint's capture keep the program path."""
    if not isinstance(value, Tensor) or value._base is None or k.advanced:
        return False
    root = self if self._base is None else self._base
    own = self._view_chain or ()
    chain = value._view_chain
    if value._base is not root or len(chain) != len(own) + 1 or chain[:len(own)] != own:
        return False
    from .._dispatch import _key_stat
    from ._registry import OPS
    if chain[-1] != (OPS[k.last or "_alias"], _key_stat((k.spec,))):
        return False
    if (grad_mode.STATE.grad_enabled and (self._requires_grad or value._requires_grad)) or \
            _dispatch.CAPTURE is not None or self._inference or \
            self._data.__class__ is not _ARRAY:
        return False
    self._counter()[0] += 1
    return True


def _exact(value, dtype):
    """value as a NumPy scalar of `dtype` when the conversion keeps it exactly, else None."""
    if isinstance(value, float) and not np.isfinite(value):
        return None
    try:
        with np.errstate(all="ignore"):  # (an overflowing cast: refused below, silently)
            got = np.asarray(value).astype(dtype)
            if isinstance(value, float) and dtype in _ONE_ROUNDING:
                # rounded once to the nearest, as XLA's convert from float64 does
                return got if np.isfinite(got) else None
            return got if got == value else None
    except (TypeError, ValueError, OverflowError):
        return None


def _numpy_key(spec):
    """The NumPy key of a basic spec (ints, (start, stop, step) slices, None), or None."""
    key = []
    for e in spec:
        if e is None:
            key.append(None)
        elif type(e) is int:
            key.append(e)
        elif type(e) is tuple and len(e) == 3:
            key.append(slice(*e))
        else:  # an index array's or a bool's placeholder: the program path
            return None
    return tuple(key)

