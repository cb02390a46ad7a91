"""Op-table rows: elementwise functions of two or more tensors beyond pointwise.py's
arithmetic: xlogy, hypot, copysign, nextafter, logaddexp, float_power, heaviside, fmax/fmin,
ldexp, the integer ops (gcd, lcm, bit shifts), addcmul and addcdiv; and signbit."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .. import _dtypes
from ._nograd import no_derivative as _raising_identity
from ._registry import function, numbered, op
from .pointwise import _pow
from .special import _BIN, _XLOGY_NUMBERS, _require_float, _require_int, _result_dtype


def _xlogy_like(log, pole):
    @jax.custom_jvp
    def f(x, y):
        out = jnp.where(x == 0, jnp.zeros((), x.dtype), x * log(y))
        return jnp.where(jnp.isnan(y), jnp.asarray(jnp.nan, out.dtype), out)

    @f.defjvp
    def f_jvp(primals, tangents):
        # PyTorch's formulas: d/dx = log(y), but 0 where x == 0 and y is at or past the pole
        # of the log; d/dy = x / y (or x / (1 + y)), nan at x = 0 on the pole
        (x, y), (dx, dy) = primals, tangents
        out = f(x, y)
        logy = log(y)
        gx = jnp.where((x == 0) & (y <= pole), jnp.zeros((), out.dtype), logy)
        dlog = jax.jvp(log, (y,), (jnp.ones_like(y),))[1]
        return out, dx * gx + dy * x * dlog

    return f


_xlogy = _xlogy_like(jnp.log, 0)
_xlog1py = _xlogy_like(jnp.log1p, -1)


@op(tensors=_BIN, promote="float", inplace=True,
    grad=numbered("Xlogy", _XLOGY_NUMBERS, "input", "other"))
def xlogy(input, other):
    """input * log(other), 0 where input is 0 (unless other is nan)."""
    return _xlogy(input, other)


@op(tensors=_BIN, promote="float", function=False, method=False, namespace="torch.special",
    grad=numbered("SpecialXlog1Py", _XLOGY_NUMBERS, "input", "other"))
def special_xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (unless other is nan)."""
    return _xlog1py(input, other)


@jax.custom_jvp
def _hypot(x, y):
    return jnp.hypot(x, y)


@_hypot.defjvp
def _hypot_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    out = _hypot(x, y)
    return out, (dx * x + dy * y) / out


@op(tensors=_BIN, inplace=True, saves={"input": ("input", "result"), "other": ("other", "result")})
def hypot(input, other):
    """sqrt(input**2 + other**2) without overflow."""
    _require_float("hypot_cpu", input)
    return _hypot(input, other)


@jax.custom_jvp
def _copysign(x, y):
    return jnp.copysign(x, y)


@_copysign.defjvp
def _copysign_jvp(primals, tangents):
    (x, y), (dx, _) = primals, tangents
    out = _copysign(x, y)
    ratio = jnp.where(x == 0, jnp.zeros((), out.dtype), out / x)
    return out, dx * ratio


@op(tensors=_BIN, promote="float", inplace=True,
    grad=numbered("Copysign", {"tt": 0, "ts": 1}, "input", "other"),
    saves={"input": ("input", "result")})
def copysign(input, other):
    """|input| with the sign of other."""
    return _copysign(input, other)


@jax.custom_jvp
def _nextafter(x, y):
    return jnp.nextafter(x, y)


@_nextafter.defjvp
def _nextafter_jvp(primals, tangents):
    # PyTorch passes the gradient to input, except where input == other (then 0)
    (x, y), (dx, _) = primals, tangents
    out = _nextafter(x, y)
    return out, dx * (x != y).astype(out.dtype)


@op(tensors=_BIN, inplace=True, saves={"input": _BIN})
def nextafter(input, other):
    """The next representable value after input towards other."""
    _require_float("nextafter_cpu", input)
    return _nextafter(input, other)


def _logaddexp_base(base_log):
    """logaddexp (base e) or logaddexp2 with PyTorch's forward and gradient."""
    pow_ = jnp.exp if base_log == 1.0 else jnp.exp2

    @jax.custom_jvp
    def f(a, b):
        m = jnp.maximum(a, b)
        same_inf = jnp.isinf(m) & (a == b)
        safe = jnp.where(same_inf, jnp.zeros((), m.dtype), m)
        out = safe + jnp.log1p(pow_(-jnp.abs(a - b))) / jnp.asarray(base_log, m.dtype)
        return jnp.where(same_inf, a, out)

    @f.defjvp
    def f_jvp(primals, tangents):
        (a, b), (da, db) = primals, tangents
        return f(a, b), da / (1 + pow_(b - a)) + db / (1 + pow_(a - b))

    return f


_logaddexp = _logaddexp_base(1.0)
_logaddexp2 = _logaddexp_base(math.log(2))


@op(tensors=_BIN)
def logaddexp(input, other):
    """log(exp(input) + exp(other))."""
    _require_float("logaddexp_cpu", input)
    return _logaddexp(input, other)


@op(tensors=_BIN)
def logaddexp2(input, other):
    """log2(2**input + 2**other)."""
    _require_float("logaddexp2_cpu", input)
    return _logaddexp2(input, other)


def _float_power_dtype(cd, _kw):
    return _dtypes.complex128 if cd.is_complex else _dtypes.float64


@op(tensors=("input", "exponent"), promote=_float_power_dtype,
    grad=numbered("Pow", {"ts": 0, "tt": 1, "st": 2}, "input", "exponent"),
    saves={"exponent": ("result",)})  # PyTorch saves float64 copies of the inputs
def float_power(input, exponent):
    """input ** exponent computed in double precision (float64 or complex128)."""
    if jnp.issubdtype(input.dtype, jnp.complexfloating):
        return jnp.power(input, exponent)
    return _pow(input, exponent)


@function(name="float_power_", function=False)
def _tensor_float_power_(self, exponent):
    """In-place float_power: self must already be float64 (or complex128)."""
    from .._dispatch import call_op_inplace
    cplx = self.is_complex() or isinstance(exponent, complex) or (
        hasattr(exponent, "is_complex") and exponent.is_complex())
    want = _dtypes.complex128 if cplx else _dtypes.float64
    if self.dtype is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_dtypes.SCALAR_NAMES[self.dtype.name]} but the operation's result "
                           f"requires dtype {_dtypes.SCALAR_NAMES[want.name]}")
    return call_op_inplace("float_power", self, exponent)


_heaviside_no_grad = _raising_identity("derivative for aten::heaviside is not implemented")


@op(tensors=("input", "values"), promote="none", inplace=True, needs=(), saves=(),
    grad="NotImplemented")
def heaviside(input, values):
    """0 where input < 0, values where input == 0, 1 where input > 0."""
    weak = getattr(getattr(values, "aval", None), "weak_type", False)
    if not weak and jnp.asarray(values).dtype != input.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    values = jnp.asarray(values, input.dtype)
    out = jnp.where(input == 0, values, (input > 0).astype(input.dtype))
    if jnp.issubdtype(out.dtype, jnp.inexact):
        out = _heaviside_no_grad(out, input, values)
    return out


@op(tensors=_BIN)
def fmax(input, other):
    """Elementwise maximum ignoring nan; the gradient of a tie goes to input."""
    return jnp.where((input >= other) | jnp.isnan(other), input, other)


@op(tensors=_BIN)
def fmin(input, other):
    """Elementwise minimum ignoring nan; the gradient of a tie goes to input."""
    return jnp.where((input <= other) | jnp.isnan(other), input, other)


@op(promote="none", differentiable=False)
def signbit(input):
    """Whether the sign bit is set (True for -0.0)."""
    if input.dtype == jnp.bool_:
        return jnp.zeros(input.shape, bool)
    if jnp.issubdtype(input.dtype, jnp.integer):
        return input < 0
    return jnp.signbit(input)


@jax.custom_jvp
def _ldexp_int(x, e):
    # an exact power of two (exp2 need not be exact), then one rounding in the product
    return x * jnp.ldexp(jnp.ones((), x.dtype), e.astype(jnp.int32))


@_ldexp_int.defjvp
def _ldexp_int_jvp(primals, tangents):
    # PyTorch's gradient takes 2 ** other in integer arithmetic: 0 for negative exponents
    (x, e), (dx, _) = primals, tangents
    out = _ldexp_int(x, e)
    pow2 = jnp.ldexp(jnp.ones((), x.dtype), e.astype(jnp.int32))
    factor = jnp.where(e < 0, jnp.zeros((), x.dtype), pow2)
    return out, dx * factor


def _ldexp_dtype(input, other):
    dt = _result_dtype(input, other)
    if not jnp.issubdtype(dt, jnp.inexact):
        dt = _dtypes.get_default_dtype().np
    return dt


# promote="none": the gradient depends on whether other is an integer tensor
@op(tensors=_BIN, promote="none", saves={"input": ("other",), "other": ("result",)})
def ldexp(input, other):
    """input * 2 ** other."""
    dt = _ldexp_dtype(input, other)
    x = jnp.asarray(input).astype(dt)
    other = jnp.asarray(other)
    if jnp.issubdtype(other.dtype, jnp.integer) or other.dtype == jnp.bool_:
        return _ldexp_int(x, other)
    return x * jnp.exp2(other.astype(dt))


@function(name="ldexp_", function=False)
def _tensor_ldexp_(self, other):
    """In-place ldexp: the result dtype must fit self's."""
    from .._dispatch import call_op_inplace
    res = _dtypes.from_jax(_ldexp_dtype(self._data, getattr(other, "_data", other)))
    if not _dtypes.can_cast(res, self.dtype):
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{_dtypes.SCALAR_NAMES[self.dtype.name]}")
    return call_op_inplace("ldexp", self, other)


def _int_binary(name, f, kernel, **flags):
    def fn(input, other):
        _require_int(kernel, input)
        return f(input, other)

    fn.__name__ = name
    fn.__doc__ = flags.pop("doc")
    op(name=name, tensors=_BIN, inplace=True, differentiable=False, **flags)(fn)


def _lcm(a, b):
    g = jnp.gcd(a, b)
    safe = jnp.where(g == 0, jnp.ones((), g.dtype), g)
    return jnp.abs(a // safe * b)


_int_binary("gcd", jnp.gcd, "gcd_cpu", doc="Greatest common divisor (non-negative).")
_int_binary("lcm", _lcm, "lcm_cpu", doc="Least common multiple (non-negative).")
_int_binary("bitwise_left_shift", jnp.left_shift, "lshift_cpu",
            dunders=("__lshift__",), rdunders=("__rlshift__",),
            doc="input shifted left by other bits (0 once the bits run out).")
_int_binary("bitwise_right_shift", jnp.right_shift, "rshift_cpu",
            dunders=("__rshift__",), rdunders=("__rrshift__",),
            doc="input shifted right by other bits (arithmetic for signed types).")


@function(name="__ilshift__", function=False)
def _ilshift(self, other):
    """self <<= other, in place."""
    from .._dispatch import call_op_inplace
    return call_op_inplace("bitwise_left_shift", self, other)


@function(name="__irshift__", function=False)
def _irshift(self, other):
    """self >>= other, in place."""
    from .._dispatch import call_op_inplace
    return call_op_inplace("bitwise_right_shift", self, other)


def _value_of(value, dtype):
    if isinstance(value, complex) and not jnp.issubdtype(dtype, jnp.complexfloating):
        raise RuntimeError("value cannot be converted to type without overflow")
    return jnp.asarray(value).astype(dtype)


@op(tensors=("input", "tensor1", "tensor2"), scalars=("value",), inplace=True,
    saves={"tensor1": ("tensor2",), "tensor2": ("tensor1",)})
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    return input + _value_of(value, input.dtype) * tensor1 * tensor2


@op(tensors=("input", "tensor1", "tensor2"), scalars=("value",), promote="none", inplace=True,
    saves={"tensor1": ("tensor2",), "tensor2": ("tensor1", "tensor2")})
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2."""
    if not (jnp.issubdtype(tensor1.dtype, jnp.inexact)
            or jnp.issubdtype(tensor2.dtype, jnp.inexact)):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    dt = _result_dtype(input, tensor1, tensor2)
    input, tensor1, tensor2 = (jnp.asarray(a).astype(dt) for a in (input, tensor1, tensor2))
    return input + _value_of(value, dt) * tensor1 / tensor2

