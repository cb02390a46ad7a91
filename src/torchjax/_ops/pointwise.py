"""Elementwise rows: arithmetic, math functions, comparisons and logic."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .. import _dtypes
from ._nograd import no_derivative
from ._registry import function, numbered, op

_BIN = ("input", "other")
# What each operand's derivative formula reads (PyTorch's derivatives.yaml; see _saves.py):
# each factor of a product reads the other one; both gradients of a quotient read the divisor
_CROSS = {"input": ("other",), "other": ("input",)}
_DIV = {"input": ("other",), "other": ("input", "other")}


def _true_div_dtype(cd, kw):
    # div without rounding_mode is true division: integer inputs give the default float dtype
    if kw.get("rounding_mode") is None and not (cd.is_floating_point or cd.is_complex):
        return _dtypes.get_default_dtype()
    return cd


def _alpha_check(dtype, alpha):
    if isinstance(alpha, complex) and not jnp.issubdtype(dtype, jnp.complexfloating):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    if isinstance(alpha, float) and not jnp.issubdtype(dtype, jnp.inexact):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def _type_name(dtype):
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(dtype).name]


# PyTorch numbers these ops' nodes by overload
_POW_GRAD = numbered("Pow", {"ts": 0, "tt": 1, "st": 2}, "input", "exponent")


def _div_grad(input, other, rounding_mode=None, **_):
    return "DivBackward0" if rounding_mode is None else "DivBackward2"


def _clamp_grad(input, min=None, max=None, **_):
    # clamp(Scalar min, Scalar max) is ClampBackward1; the Tensor overload is ClampBackward0
    return "ClampBackward0" if hasattr(min, "_data") or hasattr(max, "_data") else \
        "ClampBackward1"


# -- value checks: PyTorch's CPU kernels reject these values, XLA would return garbage ---------

def _integral(v) -> bool:
    if isinstance(v, (bool, int)):
        return True
    dt = getattr(v, "dtype", None)
    return dt is not None and not (dt.is_floating_point or dt.is_complex)


def _has_zero(v) -> bool:
    if not hasattr(v, "_data"):
        return v == 0
    a = v._data
    if isinstance(a, jax.core.Tracer) or a.size == 0:
        return False  # traced (compiled mode): values are unknown until run time
    return bool(jnp.any(a == 0))


def _check_int_divisor(input, other, rounding_mode="trunc", **_):
    if rounding_mode is not None and _integral(input) and _integral(other) and _has_zero(other):
        raise RuntimeError("ZeroDivisionError")


def _check_int_power(input, exponent, **_):
    if isinstance(exponent, int) and exponent < 0 and _integral(input) \
            and not isinstance(input, (bool, int)):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _int_power_passes(input, exponent, **_):
    # (the check reads the exponent's value only for an integer tensor to an int power)
    return not isinstance(exponent, int) or isinstance(input, (bool, int)) \
        or not _integral(input)


def _floor_div(a, b):
    if jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.floor_divide(a, b)
    return jnp.floor(a / b)


# -- arithmetic ----------------------------------------------------------------------------------

@op(tensors=_BIN, inplace=True, dunders=("__add__", "__radd__"), needs=())
def add(input, other, *, alpha=1):
    """input + alpha * other, with broadcasting and type promotion."""
    _alpha_check(input.dtype, alpha)
    if alpha != 1:
        other = other * jnp.asarray(alpha, other.dtype)
    if input.dtype == jnp.bool_:
        return jnp.logical_or(input, other)
    return input + other


@op(tensors=_BIN, inplace=True, dunders=("__sub__",), needs=(), aliases=("subtract",))
def sub(input, other, *, alpha=1):
    """input - alpha * other."""
    if input.dtype == jnp.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    _alpha_check(input.dtype, alpha)
    if alpha != 1:
        other = other * jnp.asarray(alpha, other.dtype)
    return input - other


# `2 - x` reaches Tensor.__rsub__(x, 2) == rsub(x, 2): only Python numbers get there, hence
# torch's name for the scalar overload.
@op(tensors=_BIN, method=True, dunders=("__rsub__",), needs=(),
    grad=numbered("Rsub", {"tt": 0, "ts": 1, "st": 1}, "input", "other"))
def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    _alpha_check(input.dtype, alpha)
    if alpha != 1:
        input = input * jnp.asarray(alpha, input.dtype)
    return other - input


@op(tensors=_BIN, inplace=True, dunders=("__mul__", "__rmul__"),
    aliases=("multiply",), saves=_CROSS)
def mul(input, other):
    """input * other."""
    if input.dtype == jnp.bool_:
        return jnp.logical_and(input, other)
    return input * other


@op(tensors=_BIN, inplace=True, promote=_true_div_dtype, dunders=("__truediv__",),
    aliases=("divide",), check=_check_int_divisor, grad=_div_grad, saves=_DIV)
def div(input, other, *, rounding_mode=None):
    """input / other; rounding_mode "trunc" or "floor" rounds the quotient."""
    if rounding_mode is None:
        return input / other
    if rounding_mode == "trunc":
        if jnp.issubdtype(input.dtype, jnp.integer):
            q = jnp.floor_divide(input, other)
            fix = (q < 0) & (q * other != input)
            return jnp.where(fix, q + 1, q)
        return jnp.trunc(input / other)
    if rounding_mode == "floor":
        return _floor_div(input, other)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


# `2 / x` is Tensor.__rtruediv__(x, 2): PyTorch computes it as reciprocal(x) * 2, so its node
# is MulBackward0 and it saves only its own intermediate (an in-place change to x after it is
# fine there)
@op(tensors=_BIN, function=False, method=False, dunders=("__rtruediv__",),
    promote=_true_div_dtype, grad="MulBackward0", saves=())
def _rtruediv(input, other):
    """other / input."""
    return other / input


@op(tensors=_BIN, inplace=True, promote="float", grad="DivBackward0", saves=_DIV)
def true_divide(input, other):
    """input / other as true division."""
    return input / other


# PyTorch records the op with a grad_fn that raises only when backward reaches it
_no_derivative = no_derivative("derivative for aten::floor_divide is not implemented")


@op(tensors=_BIN, inplace=True, dunders=("__floordiv__",), rdunders=("__rfloordiv__",),
    needs=(), saves=(), grad="NotImplemented", check=_check_int_divisor)
def floor_divide(input, other):
    """Floor of input / other."""
    out = _floor_div(input, other)
    if jnp.issubdtype(out.dtype, jnp.inexact):
        out = _no_derivative(out, input, other)
    return out


@op(tensors=_BIN, inplace=True, dunders=("__mod__",), rdunders=("__rmod__",),
    check=_check_int_divisor, grad=numbered("Remainder", {"ts": 0, "tt": 1}, "input", "other"),
    saves={"other": _BIN})
def remainder(input, other):
    """Python-style modulus: the result has the sign of the divisor."""
    return jnp.remainder(input, other)


@op(tensors=_BIN, inplace=True, check=_check_int_divisor,
    grad=numbered("Fmod", {"ts": 0, "tt": 1}, "input", "other"), saves={"other": _BIN})
def fmod(input, other):
    """C-style modulus: the result has the sign of the dividend."""
    return jnp.fmod(input, other)


@op(tensors=("input", "exponent"), inplace=True, dunders=("__pow__",),
    rdunders=("__rpow__",), check=_check_int_power, check_passes=_int_power_passes,
    grad=_POW_GRAD,
    saves={"input": ("input", "exponent"), "exponent": ("input", "exponent", "result")})
def pow(input, exponent):
    """input ** exponent."""
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        if input.dtype == jnp.bool_:
            return jnp.logical_or(input, jnp.logical_not(exponent))
        return _int_pow(input, exponent)
    return _pow(input, exponent)


def _int_pow(x, y):
    # a negative integer exponent gives 1 / x**|y| truncated: 0 unless x is 1 or -1 (XLA's
    # integer power is undefined there)
    out = jnp.power(x, jnp.maximum(y, 0).astype(jnp.result_type(y)))
    if not jnp.issubdtype(jnp.result_type(y), jnp.signedinteger):
        return out
    one = jnp.ones((), out.dtype)
    sign = jnp.where((y % 2) != 0, -one, one)
    neg = jnp.where(x == 1, one, jnp.where(x == -1, sign, jnp.zeros((), out.dtype)))
    return jnp.where(y < 0, neg, out)


@jax.custom_jvp
def _pow(x, y):
    return jnp.power(x, y)


@_pow.defjvp
def _pow_jvp(primals, tangents):
    # PyTorch's masks: no gradient for the base where the exponent is 0 (0 ** 0), none for the
    # exponent where the base is 0 and the exponent >= 0 (JAX gives nan in both places)
    x, y = primals
    dx, dy = tangents
    out = jnp.power(x, y)
    zero = jnp.zeros((), out.dtype)
    gx = jnp.where(y == 0, zero, y * jnp.power(x, y - 1))
    gy = jnp.where((x == 0) & (y >= 0), zero, out * jnp.log(x))
    return out, gx * dx + gy * dy


@op(inplace=True, dunders=("__neg__",), needs=(), aliases=("negative",))
def neg(input):
    """-input."""
    if input.dtype == jnp.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                        "are trying to invert a mask, use the `~` or `logical_not()` operator "
                        "instead.")
    return -input


@op(inplace=True, dunders=("__abs__",), aliases=("absolute",))
def abs(input):
    """|input|; the gradient at 0 is 0."""
    if input.dtype == jnp.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    if jnp.issubdtype(input.dtype, jnp.floating):
        return input * jnp.sign(input)  # gradient sign(x): 0 at 0, where jnp.abs gives 1
    return jnp.abs(input)


@op(inplace=True, promote="float", saves=("result",))
def reciprocal(input):
    """1 / input."""
    return 1 / input


@function()
def positive(input):
    """input itself (the same tensor object, as in PyTorch); an error for bool tensors."""
    if input.dtype is _dtypes.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


function(name="__pos__", function=False)(positive)


# -- unary math (integer inputs give the default float dtype) ------------------------------------

def _unary(name, f, saves=None, **flags):
    def fn(input):
        return f(input)

    fn.__name__ = name
    fn.__doc__ = flags.pop("doc", f"Elementwise {name}.")
    op(name=name, inplace=True, promote="float", saves=saves, **flags)(fn)


_R = ("result",)
_unary("exp", jnp.exp, saves=_R, result_grad=lambda y, g: g * y)
_unary("exp2", jnp.exp2, saves=_R, result_grad=lambda y, g: g * y * math.log(2))
_unary("log", jnp.log)
_unary("log2", jnp.log2)
_unary("log10", jnp.log10)
_unary("log1p", jnp.log1p, grad="Log1PBackward0")
_unary("expm1", jnp.expm1, saves=_R, result_grad=lambda y, g: g * (y + 1))
_unary("sqrt", jnp.sqrt, saves=_R, result_grad=lambda y, g: g / (2 * y))
_unary("rsqrt", jax.lax.rsqrt, saves=_R, result_grad=lambda y, g: g * (-0.5 * y * y * y))
_unary("sin", jnp.sin)
_unary("cos", jnp.cos)
_unary("tan", jnp.tan, saves=_R, result_grad=lambda y, g: g * (1 + y * y))
_unary("asin", jnp.arcsin, aliases=("arcsin",))
_unary("acos", jnp.arccos, aliases=("arccos",))
_unary("atan", jnp.arctan, aliases=("arctan",))
_unary("sinh", jnp.sinh)
_unary("cosh", jnp.cosh)
_unary("tanh", jnp.tanh, saves=_R, result_grad=lambda y, g: g * (1 - y * y))
# PyTorch's in-place asinh_/acosh_/atanh_ make a node of their own (AsinhBackward1, whose
# backward PyTorch 2.13 has not implemented: _ops/inplace_hyperbolic.py raises as it does)
_unary("asinh", jnp.arcsinh, aliases=("arcsinh",), inplace_overloads=1)
_unary("acosh", jnp.arccosh, aliases=("arccosh",), inplace_overloads=1)
_unary("atanh", jnp.arctanh, aliases=("arctanh",), inplace_overloads=1)
_unary("sigmoid", jax.nn.sigmoid, saves=_R, result_grad=lambda y, g: g * (y * (1 - y)))
_unary("erf", jax.scipy.special.erf)
_unary("erfc", jax.scipy.special.erfc)
_unary("erfinv", jax.scipy.special.erfinv)


@op(inplace=True, grad="PowBackward0")
def square(input):
    """input * input (integers stay integers; bool becomes int64)."""
    if input.dtype == jnp.bool_:
        input = input.astype(jnp.int64)
    return input * input


@op(tensors=_BIN, inplace=True, promote="float", aliases=("arctan2",))
def atan2(input, other):
    """Elementwise arctangent of input / other, with the quadrant from both signs."""
    return jnp.arctan2(input, other)


@op(inplace=True, saves=("result",))
def relu(input):
    """max(input, 0); the gradient at 0 is 0."""
    return jnp.where(input > 0, input, jnp.zeros((), input.dtype))


# -- rounding ------------------------------------------------------------------------------------

def _rounding(name, f, doc, aliases=()):
    def fn(input):
        if not jnp.issubdtype(input.dtype, jnp.inexact):
            if name == "frac":
                raise NotImplementedError(
                    f"\"frac_cpu\" not implemented for '{_type_name(input.dtype)}'")
            return input
        return f(input)

    fn.__name__ = name
    fn.__doc__ = doc
    op(name=name, inplace=True, needs=(), aliases=aliases)(fn)


_rounding("floor", jnp.floor, "Largest integer <= input.")
_rounding("ceil", jnp.ceil, "Smallest integer >= input.")
_rounding("trunc", jnp.trunc, "input rounded toward zero.", aliases=("fix",))
_rounding("frac", lambda x: x - jnp.trunc(x), "input minus its integer part.")


@op(inplace=True, needs=(),
    grad=lambda decimals=0, **_: "RoundBackward0" if decimals == 0 else "RoundBackward1")
def round(input, *, decimals=0):
    """Round half to even, optionally to a number of decimals."""
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        if decimals != 0:
            raise NotImplementedError(
                f"\"round_cpu\" not implemented for '{_type_name(input.dtype)}'")
        return input
    if decimals == 0:
        return jnp.round(input)
    # as PyTorch: multiply by 10**decimals, or divide by 10**-decimals (both exact powers)
    if decimals > 0:
        scale = jnp.asarray(10.0 ** decimals, input.dtype)
        return jnp.round(input * scale) / scale
    scale = jnp.asarray(10.0 ** -decimals, input.dtype)
    return jnp.round(input / scale) * scale


@op(inplace=True, needs=())
def sign(input):
    """-1, 0 or 1 by the sign of input."""
    if input.dtype == jnp.bool_:
        return input
    return jnp.sign(input)


@op(inplace=True, saves=("input", "result"))
def sgn(input):
    """sign for real inputs, input / |input| for complex ones."""
    if input.dtype == jnp.bool_:
        return input
    if jnp.iscomplexobj(input):
        # z / |z|, 0 at 0: jnp.sign has a zero derivative for complex inputs
        zero = input == 0
        return jnp.where(zero, 0, input / jnp.where(zero, 1, jnp.abs(input)))
    return jnp.sign(input)


# -- clamping, selection -------------------------------------------------------------------------

@op(tensors=("input", "min", "max"), inplace=True, aliases=("clip",), grad=_clamp_grad)
def clamp(input, min=None, max=None):
    """Clamp into [min, max]; the gradient is 1 at the bounds, as in PyTorch."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    out = input
    if min is not None:
        out = jnp.where(out < min, min, out)
    if max is not None:
        out = jnp.where(out > max, max, out)
    return jnp.broadcast_to(out, jnp.broadcast_shapes(
        input.shape, *(jnp.shape(v) for v in (min, max) if v is not None)))


@op(tensors=("input", "min"), inplace=True, grad=numbered("ClampMin", {"s": 0, "t": 1}, "min"))
def clamp_min(input, min):
    """Raises every element below `min` to `min` (clamp with a lower bound only)."""
    return jnp.where(input < min, min, input)


@op(tensors=("input", "max"), inplace=True, grad=numbered("ClampMax", {"s": 0, "t": 1}, "max"))
def clamp_max(input, max):
    """Lowers every element above `max` to `max` (clamp with an upper bound only)."""
    return jnp.where(input > max, max, input)


@op(tensors=_BIN, inplace=False)
def maximum(input, other):
    """Elementwise maximum; ties split the gradient evenly."""
    return jnp.maximum(input, other)


@op(tensors=_BIN, inplace=False)
def minimum(input, other):
    """Elementwise minimum; ties split the gradient evenly."""
    return jnp.minimum(input, other)


_C10_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int"}


def _lerp_check(input, end, weight):
    want = _dtypes.from_jax(input.dtype).name
    for n, v in (("end", end), ("weight", weight)):
        # Python numbers reach the row as weakly typed arrays: they adapt instead
        weak = getattr(getattr(v, "aval", None), "weak_type", False)
        if n == "weight" and jnp.ndim(v) == 0:
            continue  # a 0-d weight of any float dtype is accepted (and cast)
        if hasattr(v, "dtype") and not weak and v.dtype != input.dtype:
            got = _dtypes.from_jax(v.dtype).name
            raise RuntimeError(f"expected dtype {_C10_NAMES.get(want, want)} for `{n}` but got "
                               f"dtype {_C10_NAMES.get(got, got)}")


# promote="none": PyTorch requires equal dtypes instead of promoting
@op(tensors=("input", "end", "weight"), inplace=True, promote="none",
    saves={"input": ("weight",), "end": ("weight",), "weight": ("input", "end")},
    grad=numbered("Lerp", {"s": 0, "t": 1}, "weight"))
def lerp(input, end, weight):
    """input + weight * (end - input), computed as PyTorch does for weights above 0.5."""
    _lerp_check(input, end, weight)
    weight = jnp.asarray(weight).astype(input.dtype)
    diff = end - input
    return jnp.where(jnp.abs(weight) < 0.5, input + weight * diff, end - diff * (1 - weight))


@op(tensors=("condition", "input", "other"), promote_args=("input", "other"), method=False,
    function=False, needs=("condition",))
def where(condition, input, other):
    """input where condition holds, other elsewhere."""
    if condition.dtype != jnp.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                        f"with dtype {_dtypes.SCALAR_NAMES[_dtypes.from_jax(condition.dtype).name]}")
    return jnp.where(condition, input, other)


@function(name="where", method=False)
def _where(condition, input=None, other=None, *, out=None):
    """input where condition holds, other elsewhere; with the condition alone, the indices
    where it holds (nonzero(condition, as_tuple=True))."""
    from .._dispatch import FUNCTIONS
    if input is None and other is None:
        if out is not None:
            raise TypeError("where() got an unexpected keyword argument 'out' with a condition "
                            "only")
        from .sorting import nonzero
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        got = [_arg_type(condition)] + ([_arg_type(input)] if input is not None else []) + (
            [f"other={_arg_type(other)}"] if other is not None else [])
        got = ", ".join(got)
        raise TypeError(
            f"where() received an invalid combination of arguments - got ({got}), but expected "
            "one of:\n * (Tensor condition)\n * (Tensor condition, Tensor input, Tensor other, *, "
            "Tensor out = None)\n * (Tensor condition, Number self, Tensor other)\n * (Tensor "
            "condition, Tensor input, Number other)\n * (Tensor condition, Number self, Number "
            "other)\n")
    return FUNCTIONS["where"](condition, input, other, out=out)


def _arg_type(v) -> str:
    return "Tensor" if hasattr(v, "_data") else type(v).__name__


@function(name="where", function=False)
def _tensor_where(self, condition, other):
    """Tensor.where(condition, other): self where condition holds, other elsewhere."""
    from .._dispatch import call_op
    return call_op("where", condition, self, other)


# -- comparison and logic ------------------------------------------------------------------------

def _compare(name, f, dunder, aliases=()):
    def fn(input, other):
        return f(input, other)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} comparison (a bool tensor)."
    op(name=name, tensors=_BIN, inplace=True, differentiable=False,
       dunders=(dunder,), aliases=aliases)(fn)


_compare("eq", jnp.equal, "__eq__")
_compare("ne", jnp.not_equal, "__ne__", aliases=("not_equal",))
_compare("lt", jnp.less, "__lt__", aliases=("less",))
_compare("le", jnp.less_equal, "__le__", aliases=("less_equal",))
_compare("gt", jnp.greater, "__gt__", aliases=("greater",))
_compare("ge", jnp.greater_equal, "__ge__", aliases=("greater_equal",))


def _logical(name, f):
    def fn(input, other):
        return f(input, other)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of the truth values."
    op(name=name, tensors=_BIN, promote="none", inplace=True, differentiable=False)(fn)


_logical("logical_and", jnp.logical_and)
_logical("logical_or", jnp.logical_or)
_logical("logical_xor", jnp.logical_xor)


@op(promote="none", inplace=True, differentiable=False)
def logical_not(input):
    """Elementwise NOT, treating zero as False and anything else as True."""
    return jnp.logical_not(input)


def _bitwise(name, f, dunder, rdunder):
    def fn(input, other):
        if jnp.issubdtype(input.dtype, jnp.inexact):
            raise NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{_type_name(input.dtype)}'")
        return f(input, other)

    fn.__name__ = name
    fn.__doc__ = (f"Elementwise {name.split('_')[1].upper()} of the bits of two integer or bool "
                  "tensors, with broadcasting.")
    op(name=name, tensors=_BIN, inplace=True, differentiable=False, dunders=(dunder,),
       rdunders=(rdunder,))(fn)


_bitwise("bitwise_and", jnp.bitwise_and, "__and__", "__rand__")
_bitwise("bitwise_or", jnp.bitwise_or, "__or__", "__ror__")
_bitwise("bitwise_xor", jnp.bitwise_xor, "__xor__", "__rxor__")


@op(inplace=True, differentiable=False, dunders=("__invert__",))
def bitwise_not(input):
    """Elementwise bitwise NOT of an integer or bool tensor (`~x`)."""
    if jnp.issubdtype(input.dtype, jnp.inexact):
        raise NotImplementedError(
            f"\"bitwise_not_cpu\" not implemented for '{_type_name(input.dtype)}'")
    return jnp.invert(input)


def _isclass(name, f):
    def fn(input):
        return f(input)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} (a bool tensor)."
    op(name=name, promote="none", differentiable=False)(fn)


_isclass("isnan", jnp.isnan)
_isclass("isinf", jnp.isinf)
_isclass("isfinite", jnp.isfinite)
_isclass("isposinf", jnp.isposinf)
_isclass("isneginf", jnp.isneginf)
_isclass("isreal", jnp.isreal)


@op(tensors=_BIN, differentiable=False)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise."""
    return jnp.isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


@function()
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element of input is close to other (a Python bool)."""
    from .._dispatch import call_op
    return bool(call_op("isclose", input, other, rtol, atol, equal_nan).all())


@function()
def equal(input, other) -> bool:
    """Whether the two tensors have the same shape and elements (a Python bool)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool((input == other).all())
