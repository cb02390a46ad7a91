"""torchjax.testing: assert_close with PyTorch's tolerances and messages, and make_tensor.

The comparison runs on the host in numpy with each tensor's own dtype, so the tolerance
arithmetic rounds like PyTorch's CPU kernels (float16/bfloat16 round after every operation).
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import warnings

import jax.numpy as jnp
import numpy as np

from . import _dtypes
from ._tensor import Tensor
from ._x64 import scope

__all__ = ["assert_close", "make_tensor"]

# {dtype name: (rtol, atol)}; other dtypes (integers, bool) compare exactly
_PRECISIONS = {
    "float16": (0.001, 1e-5),
    "bfloat16": (0.016, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _Failure(Exception):
    """A comparison failure: the exception type to raise, its message and the item path."""

    def __init__(self, type_, msg, id_=()):
        super().__init__(msg)
        self.type_ = type_
        self.msg = msg
        self.id = id_

    def to_error(self, msg=None) -> Exception:
        if isinstance(msg, str):
            return self.type_(msg)
        text = self.msg
        if self.id:
            text += "\n\nThe failure occurred for item " + "".join(str([i]) for i in self.id)
        return self.type_(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    pass


def _type_str(obj) -> str:
    # our Tensor stands in for torch.Tensor in messages
    return "<class 'torch.Tensor'>" if type(obj) is Tensor else str(type(obj))


def _tolerances(names, rtol, atol, id_):
    if (rtol is None) != (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                       f"but got no {'rtol' if rtol is None else 'atol'}.", id_)
    if rtol is not None:
        return rtol, atol
    pairs = [_PRECISIONS.get(n, (0.0, 0.0)) for n in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _diff_line(kind, diff, idx, tol, equality) -> str:
    line = (f"{kind.title()} difference: {diff}" if idx is None
            else f"Greatest {kind} difference: {diff} at index {idx}")
    if not equality:
        line += f" (up to {tol} allowed)"
    return line + "\n"


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += extra.strip() + "\n"
    msg += _diff_line("absolute", abs_diff, abs_idx, atol, equality)
    msg += _diff_line("relative", rel_diff, rel_idx, rtol, equality)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None,
                         atol, rel_diff, None, rtol)


# -- pairs -------------------------------------------------------------------------------------

class _NonePair:
    def __init__(self, actual, expected, id_, **_):
        if not (actual is None or expected is None):
            raise _Unsupported
        self.actual, self.expected, self.id = actual, expected, id_

    def compare(self):
        if not (self.actual is None and self.expected is None):
            raise _Failure(AssertionError,
                           f"None mismatch: {self.actual} is not {self.expected}", self.id)


class _BooleanPair:
    def __init__(self, actual, expected, id_, **_):
        if not all(isinstance(v, (bool, np.bool_)) for v in (actual, expected)):
            raise _Unsupported
        self.actual, self.expected = (bool(v) for v in (actual, expected))
        self.id = id_

    def compare(self):
        if self.actual is not self.expected:
            raise _Failure(AssertionError,
                           f"Booleans mismatch: {self.actual} is not {self.expected}", self.id)


class _NumberPair:
    def __init__(self, actual, expected, id_, rtol=None, atol=None, equal_nan=False,
                 check_dtype=False, **_):
        types = (int, float, complex, np.number)
        if not all(isinstance(v, types) for v in (actual, expected)):
            raise _Unsupported
        self.actual, self.expected = (v.item() if isinstance(v, np.number) else v
                                      for v in (actual, expected))
        self.id = id_
        names = [_NUMBER_DTYPES.get(type(v), "int64") for v in (self.actual, self.expected)]
        self.rtol, self.atol = _tolerances(names, rtol, atol, id_)
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            raise _Failure(AssertionError,
                           f"The (d)types do not match: {type(a)} != {type(e)}.", self.id)
        if a == e:
            return
        if self.equal_nan and cmath.isnan(a) and cmath.isnan(e):
            return
        abs_diff = abs(a - e)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(e):
            return
        raise _Failure(AssertionError, _scalar_msg(a, e, self.rtol, self.atol), self.id)


def _to_tensor(v) -> Tensor:
    if isinstance(v, Tensor):
        return v
    from ._creation import as_tensor
    try:
        return as_tensor(v)
    except Exception as e:
        raise _Unsupported from e


class _TensorLikePair:
    def __init__(self, actual, expected, id_, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, **_):
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or (not allow_subclasses and type(actual) is not type(expected)):
            raise _Unsupported
        self.actual, self.expected = _to_tensor(actual), _to_tensor(expected)
        self.id = id_
        self.rtol, self.atol = _tolerances(
            [self.actual.dtype.name, self.expected.dtype.name], rtol, atol, id_)
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_stride = check_stride

    def _attr_mismatch(self, name, a, e):
        raise _Failure(AssertionError,
                       f"The values for attribute '{name}' do not match: {a} != {e}.", self.id)

    def compare(self):
        a, e = self.actual, self.expected
        if a.shape != e.shape:
            self._attr_mismatch("shape", a.shape, e.shape)
        if self.check_stride and hasattr(a, "stride") and a.stride() != e.stride():
            self._attr_mismatch("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            self._attr_mismatch("device", a.device, e.device)
        if self.check_dtype and a.dtype is not e.dtype:
            self._attr_mismatch("dtype", a.dtype, e.dtype)
        an, en = np.asarray(a._data), np.asarray(e._data)
        if a.dtype is not e.dtype:
            da, de = (_dtypes.int64 if d.name in ("uint16", "uint32", "uint64") else d
                      for d in (a.dtype, e.dtype))
            common = _dtypes.promote_types(da, de)
            an, en = an.astype(common.np), en.astype(common.np)
            dtype = common
        else:
            dtype = a.dtype
        self._compare_values(an, en, dtype)

    def _compare_values(self, a, e, dtype):
        matches = _isclose(a, e, dtype, self.rtol, self.atol, self.equal_nan)
        if matches.all():
            return
        if a.shape == ():
            msg = _scalar_msg(_item(a[()]), _item(e[()]), self.rtol, self.atol)
        else:
            msg = _tensor_msg(a, e, matches, dtype, self.rtol, self.atol)
        raise _Failure(AssertionError, msg, self.id)


def _opmath(real_dtype):
    """The dtype PyTorch's CPU kernels compute in (float32 for half types)."""
    return np.dtype(np.float64) if real_dtype == np.float64 else np.dtype(np.float32)


def _isclose(a, e, dtype, rtol, atol, equal_nan):
    """torch.isclose: |a - e| <= atol + |rtol * e|, each step rounded to the tensors' dtype."""
    with np.errstate(all="ignore"):
        close = a == e
        inexact = dtype.is_floating_point or dtype.is_complex
        if equal_nan and inexact:
            close |= np.isnan(a) & np.isnan(e)
        if rtol == 0 and atol == 0:
            return close
        if not inexact:
            # bool compares as the default float dtype; integer tolerances are floats
            fd = _dtypes.get_default_dtype().np
            if dtype is _dtypes.bool:
                a, e = a.astype(fd), e.astype(fd)
            real = fd
        else:
            real = np.abs(e.reshape(-1)[:0]).dtype
        op = _opmath(real)
        if e.dtype.kind == "c":
            scaled = e * real.type(rtol)
        else:
            scaled = (e.astype(op) * op.type(rtol)).astype(real)
        allowed = (np.abs(scaled).astype(op) + op.type(atol)).astype(real)
        actual_err = np.abs(a - e)
        close |= np.isfinite(actual_err) & (actual_err <= allowed)
    return close


def _item(x):
    """A numpy scalar as the Python number torch's .item() gives."""
    if x.dtype.kind == "b":
        return bool(x)
    if x.dtype.kind in "iu":
        return int(x)
    if x.dtype.kind == "c":
        return complex(x)
    return float(x)


def _tensor_msg(a, e, matches, dtype, rtol, atol) -> str:
    total = matches.size
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    af, ef, mf = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if not (dtype.is_floating_point or dtype.is_complex):
        af, ef = af.astype(np.int64), ef.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(af - ef)
        abs_diff[mf] = 0
        abs_i = _argmax(abs_diff)
        if abs_diff.dtype.kind in "iu":
            fd = _dtypes.get_default_dtype().np
            rel_diff = abs_diff.astype(fd) / np.abs(ef).astype(fd)
        else:
            rel_diff = abs_diff / np.abs(ef)
        rel_diff[mf] = 0
        rel_i = _argmax(rel_diff)

    def unravel(i):
        return tuple(int(k) for k in np.unravel_index(i, matches.shape))

    return _mismatch_msg("Tensor-likes", extra, _item(abs_diff[abs_i]), unravel(abs_i), atol,
                         _item(rel_diff[rel_i]), unravel(rel_i), rtol)


def _argmax(v) -> int:
    """torch.max(v, 0)'s index: NaN counts as the largest value."""
    if v.dtype.kind not in "iub":
        v = v.astype(np.float64)
        nan = np.isnan(v)
        if nan.any():
            return int(np.argmax(nan))
    return int(np.argmax(v))


def _originate(actual, expected, id_, options) -> list:
    seq = collections.abc.Sequence
    if (isinstance(actual, seq) and not isinstance(actual, str)
            and isinstance(expected, seq) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, "The length of the sequences mismatch: "
                           f"{len(actual)} != {len(expected)}", id_)
        pairs = []
        for i in range(len(actual)):
            pairs.extend(_originate(actual[i], expected[i], (*id_, i), options))
        return pairs
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            raise _Failure(AssertionError, "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(ek - ak)}\n"
                           f"Additional keys in the actual mapping: {sorted(ak - ek)}", id_)
        keys = ak
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        pairs = []
        for k in keys:
            pairs.extend(_originate(actual[k], expected[k], (*id_, k), options))
        return pairs
    for cls in (_NonePair, _BooleanPair, _NumberPair, _TensorLikePair):
        try:
            return [cls(actual, expected, id_, **options)]
        except _Unsupported:
            continue
    raise _Failure(TypeError, "No comparison pair was able to handle inputs of type "
                   f"{_type_str(actual)} and {_type_str(expected)}.", id_)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert that actual and expected are close (PyTorch's torch.testing.assert_close)."""
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                   equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    try:
        pairs = _originate(actual, expected, (), options)
    except _Failure as f:
        raise f.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _Failure as f:
            raise f.to_error(msg) from None



def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of the given shape and dtype with values drawn uniformly from [low, high)."""
    from ._creation import _finish, _sample
    d = _dtypes.to_dtype(dtype)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if requires_grad and not (d.is_floating_point or d.is_complex):
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={d}")
    shape = _shape_arg(shape)
    inexact = d.is_floating_point or d.is_complex
    if d is _dtypes.bool:
        lowest, highest, dlow, dhigh = 0, 2, 0, 2
    elif inexact:
        info = jnp.finfo(d.to_real().np)
        lowest, highest, dlow, dhigh = float(info.min), float(info.max), -9, 9
    else:
        info = jnp.iinfo(d.np)
        lowest, highest = int(info.min), int(info.max)
        dlow, dhigh = (0, 10) if int(info.min) == 0 else (-9, 10)
    low = dlow if low is None else low
    high = dhigh if high is None else high
    if low != low or high != high:
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    low, high = max(low, lowest), min(high, highest)
    if low > high or (low == high and not inexact):
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    with scope():  # torchjax's x64 scope: samples of 64-bit dtypes
        if inexact:
            if low == high:
                warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating "
                              "or complex types is deprecated since 2.1 and will be removed in "
                              "2.3. Use `torch.full(...)` instead.", FutureWarning, stacklevel=2)
            real = d.to_real()
            arr = _sample("uniform", shape, real, None, float(low), float(high))
            if d.is_complex:
                imag = _sample("uniform", shape, real, None, float(low), float(high))
                arr = (arr + 1j * imag).astype(d.np)
            if exclude_zero:
                tiny = float(jnp.finfo(real.np).smallest_normal)
                arr = jnp.where(arr == 0, (tiny + 1j * tiny) if d.is_complex else tiny,
                                arr).astype(d.np)
        else:
            arr = _sample("randint", shape, d, None, int(low), int(high))
            if exclude_zero:
                arr = jnp.where(arr == 0, jnp.ones_like(arr), arr)
        return _finish(arr, device, requires_grad)
