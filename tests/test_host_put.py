"""_host_put.put: a NumPy array on the default device, uncommitted, exactly as jax.device_put
places it (type, dtype, weak type, sharding, committedness, values), by a shorter path."""

import jax
import ml_dtypes
import numpy as np
import pytest

from torchjax import _host_put
from torchjax._x64 import scope

ARRAYS = [np.arange(16, dtype=np.int64), np.zeros((2, 3), np.float32), np.array(True),
          np.arange(6, dtype=np.uint8).reshape(3, 2), np.ones(0, np.float16),
          np.array([1 + 2j], np.complex64), np.linspace(0, 1, 5).astype(ml_dtypes.bfloat16),
          np.arange(8.0)[::2]]  # (a strided view: not contiguous)


def _same(got, want):
    assert type(got) is type(want)
    assert got.aval == want.aval and got.aval.weak_type == want.aval.weak_type
    assert got.sharding == want.sharding and got.committed == want.committed is False
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("arr", ARRAYS, ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_put_is_device_put(arr):
    with scope():  # (torchjax's x64 scope, where its arrays are made)
        _same(_host_put.put(arr.copy()), jax.device_put(arr.copy()))


def test_put_outside_x64_canonicalizes_as_device_put():
    arr = np.arange(4, dtype=np.int64)
    got = _host_put.put(arr)  # jax.device_put's own path: int64 becomes int32 without x64
    _same(got, jax.device_put(arr))
    assert got.dtype == jax.device_put(arr).dtype


def test_put_of_other_values_is_device_put():
    for v in (2.5, np.float32(3), True, 7):
        got, want = _host_put.put(v), jax.device_put(v)
        assert got.aval == want.aval and got.committed == want.committed
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_put_follows_the_default_device():
    dev = jax.devices()[-1]
    with jax.default_device(dev), scope():
        got = _host_put.put(np.arange(3.0))
        _same(got, jax.device_put(np.arange(3.0)))
        assert got.devices() == {dev}
