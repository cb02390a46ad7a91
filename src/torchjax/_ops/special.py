"""Op-table rows: unary special functions (digamma, polygamma, mvlgamma, logit, nan_to_num)
and the torch.special rows, with the dtype checks binary_math.py shares."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from .. import _dtypes
from ._nograd import no_derivative as _raising_identity
from ._registry import function, numbered, op
from .pointwise import _type_name
from .pointwise import round as _round

_BIN = ("input", "other")
_SQRT_2PI = math.sqrt(2 * math.pi)

# the scalar overloads number their nodes: xlogy(Scalar, Tensor) 1, xlogy(Tensor, Scalar) 2
_XLOGY_NUMBERS = {"tt": 0, "st": 1, "ts": 2}


def _not_implemented_for(kernel, dtype):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(dtype)}'")


def _require_float(kernel, *arrays):
    for a in arrays:
        if not jnp.issubdtype(a.dtype, jnp.inexact):
            raise _not_implemented_for(kernel, a.dtype)


def _require_int(kernel, *arrays):
    for a in arrays:
        if not jnp.issubdtype(a.dtype, jnp.integer):
            raise _not_implemented_for(kernel, a.dtype)


def _upcast(f):
    """f computed in float32 for half-precision inputs (the JAX kernels want 32 bits or more)."""
    def g(*args):
        dt = args[0].dtype
        if dt in (jnp.float16, jnp.bfloat16):
            return f(*(a.astype(jnp.float32) for a in args)).astype(dt)
        return f(*args)
    return g


def _torch_dtype(v):
    """PyTorch's promotion key of an argument seen inside a promote="none" row."""
    if isinstance(v, bool):
        return _dtypes.bool, 2
    if isinstance(v, (int, float, complex)):
        return _dtypes._scalar_dtype(v), 2
    aval = getattr(v, "aval", None)
    if aval is not None and aval.weak_type:  # a Python number
        if jnp.issubdtype(v.dtype, jnp.complexfloating):
            return _dtypes.get_default_dtype().to_complex(), 2
        if jnp.issubdtype(v.dtype, jnp.floating):
            return _dtypes.get_default_dtype(), 2
        return _dtypes.int64, 2
    return _dtypes.from_jax(jnp.asarray(v).dtype), 0 if jnp.ndim(v) else 1


def _result_dtype(*vals):
    return _dtypes.result_type_from_keys(tuple(_torch_dtype(v) for v in vals)).np


# -- unary special functions (integer inputs give the default float dtype) ----------------------

def _unary(name, f, **flags):
    def fn(input):
        return f(input)

    fn.__name__ = name
    fn.__doc__ = flags.pop("doc", f"Elementwise {name}.")
    flags.setdefault("method", True)
    flags.setdefault("inplace", flags["method"])
    op(name=name, promote="float", **flags)(fn)


def _digamma(x):
    # PyTorch: digamma(+-0) = -+inf (JAX gives nan)
    return jnp.where(x == 0, jnp.copysign(jnp.asarray(jnp.inf, x.dtype), -x),
                     jax.lax.digamma(x))


_unary("lgamma", _upcast(jax.lax.lgamma), doc="log |Gamma(input)|.")
_unary("digamma", _upcast(_digamma), doc="The logarithmic derivative of Gamma.")
_unary("i0", _upcast(jss.i0), doc="The modified Bessel function of the first kind, order 0.")
_unary("sinc", jnp.sinc, doc="sin(pi x) / (pi x), 1 at 0.")
_unary("deg2rad", lambda x: x * jnp.asarray(math.pi / 180, x.dtype),
       doc="Degrees to radians.", grad="Deg2RadBackward0", saves=())
_unary("rad2deg", lambda x: x * jnp.asarray(180 / math.pi, x.dtype),
       doc="Radians to degrees.", grad="Rad2DegBackward0", saves=())


def _trigamma(x):
    # reflection below 1/2, then a recurrence up to x + 6 and the asymptotic series
    pi = jnp.asarray(math.pi, x.dtype)
    small = x < 0.5
    s = jnp.sin(pi * x)
    refl = jnp.where(small, -(pi * pi) / (s * s), jnp.zeros((), x.dtype))
    x = jnp.where(small, 1 - x, x)
    acc = refl
    for _ in range(6):
        acc = acc + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    acc = acc + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return jnp.where(small, -acc, acc)


def _zeta(x, q):
    # JAX's Hurwitz zeta gives nan where PyTorch (Cephes) gives inf: q a non-positive integer
    out = jss.zeta(x, q)
    pole = (q <= 0) & (q == jnp.floor(q)) & (x > 1)
    return jnp.where(pole, jnp.asarray(jnp.inf, out.dtype), out)


def _polygamma_fn(n, x):
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    sign = 1.0 if n % 2 else -1.0
    return sign * math.exp(math.lgamma(n + 1.0)) * _zeta(jnp.asarray(n + 1.0, x.dtype), x)


def _polygamma_impl(n, x):
    @jax.custom_jvp
    def f(x):
        return _polygamma_fn(n, x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        return f(x), _polygamma_impl(n + 1, x) * dx

    return f(x)


@op(tensors=("input",), promote="float", method=False, inplace_overloads=1)
def polygamma(n, input):
    """The n-th derivative of digamma."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _upcast(lambda x: _polygamma_impl(n, x))(input)


@function(name="polygamma", function=False)
def _tensor_polygamma(self, n):
    """Tensor.polygamma(n): the n-th derivative of digamma of self."""
    from .._dispatch import call_op
    return call_op("polygamma", n, self)


@function(name="polygamma_", function=False)
def _tensor_polygamma_(self, n):
    """In-place Tensor.polygamma_(n)."""
    from .._dispatch import call_op_inplace
    return call_op_inplace("polygamma", n, self)


@op(promote="float", inplace=True)
def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension p."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    args = jnp.arange(-p / 2 + 0.5, 0.5, 0.5, dtype=input.dtype) + input[..., None]
    out = jnp.sum(_upcast(jax.lax.lgamma)(args), axis=-1)
    return out + jnp.asarray(p * (p - 1) / 4 * math.log(math.pi), input.dtype)


@op(inplace=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """nan, +inf and -inf replaced by finite values (the dtype's extremes by default)."""
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        return input
    fi = jnp.finfo(input.dtype)
    hi = fi.max if posinf is None else posinf
    lo = fi.min if neginf is None else neginf
    out = jnp.where(jnp.isnan(input), jnp.asarray(nan, input.dtype), input)
    out = jnp.where(jnp.isposinf(input), jnp.asarray(hi, input.dtype), out)
    return jnp.where(jnp.isneginf(input), jnp.asarray(lo, input.dtype), out)


def _logit_impl(lo, hi):
    @jax.custom_jvp
    def f(x):
        if lo is not None:
            x = jnp.where(x < lo, jnp.asarray(lo, x.dtype), x)
            x = jnp.where(x > hi, jnp.asarray(hi, x.dtype), x)
        return jnp.log(x / (1 - x))

    @f.defjvp
    def f_jvp(primals, tangents):
        # PyTorch: nan outside [0, 1] without eps; 0 outside [eps, 1 - eps] with it
        (x,), (dx,) = primals, tangents
        scale = 1 / (x * (1 - x))
        if lo is None:
            scale = jnp.where((x < 0) | (x > 1), jnp.asarray(jnp.nan, x.dtype), scale)
        else:
            scale = jnp.where((x < lo) | (x > hi), jnp.zeros((), x.dtype), scale)
        return f(x), dx * scale

    return f


@op(promote="float", inplace=True)
def logit(input, eps=None):
    """log(input / (1 - input)), with input clamped to [eps, 1 - eps] when eps is given."""
    if eps is None:
        return _logit_impl(None, None)(input)
    return _logit_impl(eps, 1 - eps)(input)


# -- torch.special rows -------------------------------------------------------------------------

_IR = ("input", "result")  # derivatives that read both the input and the result


def _special(name, f, grad=None, **flags):
    def fn(input):
        return f(input)

    fn.__name__ = "special_" + name
    fn.__doc__ = flags.pop("doc")
    op(name="special_" + name, promote="float", function=False, method=False,
       namespace="torch.special", grad=grad, **flags)(fn)


def _no_half(kernel, f):
    """f, raising PyTorch's error for float16/bfloat16 inputs (no half kernel on CPU)."""
    def g(*args):
        for a in args:
            if a.dtype in (jnp.float16, jnp.bfloat16):
                raise _not_implemented_for(kernel, a.dtype)
        return f(*args)
    return g


def _half_no_backward(kernel, f):
    """f, whose backward raises PyTorch's error for float16/bfloat16 inputs."""
    def g(x):
        out = f(x)
        if x.dtype in (jnp.float16, jnp.bfloat16):
            out = _raising_identity(f"\"{kernel}\" not implemented for "
                                    f"'{_type_name(x.dtype)}'", NotImplementedError)(out)
        return out
    return g


def _with_jvp(f, deriv):
    """f with the derivative deriv(x, f(x)) (PyTorch's formula)."""
    g = jax.custom_jvp(f)

    @g.defjvp
    def g_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        y = g(x)
        return y, deriv(x, y) * dx

    return g


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

_erfcx = _with_jvp(jss.erfcx, lambda x, y: 2 * x * y - _TWO_OVER_SQRT_PI)
_ndtri = _with_jvp(jss.ndtri, lambda x, y: _SQRT_2PI * jnp.exp(y * y / 2))


def _log_ndtr_fwd(x):
    t = x * math.sqrt(0.5)
    low = jnp.log(_erfcx(-t) / 2) - x * x / 2
    high = jnp.log1p(-jss.erfc(t) / 2)
    return jnp.where(x < -1, low, high)


_log_ndtr = _with_jvp(_log_ndtr_fwd, lambda x, y: jnp.exp(-(y + x * x / 2)) / _SQRT_2PI)
_i0e = _with_jvp(jss.i0e, lambda x, y: jss.i1e(x) - jnp.sign(x) * y)


def _tiny_safe(x):
    tiny = jnp.abs(x) <= jnp.finfo(x.dtype).eps
    return tiny, jnp.where(tiny, jnp.asarray(jnp.finfo(x.dtype).eps, x.dtype), x)


def _i1_deriv(x, y):
    tiny, s = _tiny_safe(x)
    return jnp.where(tiny, jnp.asarray(0.5, x.dtype), jss.i0(s) - y / s)


def _i1e_deriv(x, y):
    tiny, s = _tiny_safe(x)
    return jnp.where(tiny, jnp.asarray(0.5, x.dtype), jss.i0e(s) - y * (jnp.sign(s) + 1 / s))


_i1 = _with_jvp(jss.i1, _i1_deriv)
_i1e = _with_jvp(jss.i1e, _i1e_deriv)


def _entr_fwd(x):
    zero = jnp.zeros((), x.dtype)
    out = jnp.where(x > 0, -x * jnp.log(jnp.where(x > 0, x, 1)), zero)
    out = jnp.where(x < 0, jnp.asarray(-jnp.inf, x.dtype), out)
    return jnp.where(jnp.isnan(x), x, out)


_entr = _with_jvp(_entr_fwd, lambda x, y: -(1 + jnp.log(x)))

_special("erfcx", _no_half("erfcx_cpu", _erfcx), saves=_IR,
         doc="exp(input**2) * erfc(input), without overflow.")
_special("ndtr", lambda x: (1 + jax.lax.erf(x * math.sqrt(0.5))) * 0.5, grad="MulBackward1",
         saves=(),  # PyTorch's composite saves only its own intermediate
         doc="The standard normal cumulative distribution function.")
_special("ndtri", _no_half("ndtri_cpu", _ndtri), saves=("result",), doc="The inverse of ndtr.")
_special("log_ndtr", _no_half("log_ndtr_cpu", _log_ndtr), saves=_IR,
         doc="log(ndtr(input)), accurate in both tails.")
_special("i0e", _upcast(_i0e), grad="SpecialI0EBackward0", saves=_IR,
         doc="The exponentially scaled modified Bessel function of order 0.")
_special("i1", _half_no_backward("i1_backward", _upcast(_i1)), saves=_IR,
         doc="The modified Bessel function of the first kind, order 1.")
_special("i1e", _half_no_backward("i1e_backward", _upcast(_i1e)), grad="SpecialI1EBackward0",
         saves=_IR,
         doc="The exponentially scaled modified Bessel function of order 1.")
_special("entr", _entr, doc="-input * log(input), 0 at 0 and -inf below.")


@op(function=False, method=False, namespace="torch.special", needs=(), grad="RoundBackward1")
def special_round(input, *, decimals=0):
    """Round half to even, optionally to a number of decimals (floating inputs only)."""
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise _not_implemented_for("round_vml_cpu" if decimals == 0 else "round_cpu",
                                   input.dtype)
    return _round(input, decimals=decimals)


_zeta_x_no_grad = _raising_identity("the derivative for 'zeta' is not implemented.",
                                    NotImplementedError)


@jax.custom_jvp
def _zeta_q(x, q):
    return _zeta(x, q)


@_zeta_q.defjvp
def _zeta_q_jvp(primals, tangents):
    # the x tangent is kept (times 0) so that backward reaches the raising identity on x
    (x, q), (dx, dq) = primals, tangents
    out = _zeta_q(x, q)
    return out, dq * (-x * _zeta(x + 1, q)) + dx * jnp.zeros_like(out)


@op(tensors=_BIN, promote="float", function=False, method=False, namespace="torch.special",
    grad=numbered("SpecialZeta", _XLOGY_NUMBERS, "input", "other"))
def special_zeta(input, other):
    """The Hurwitz zeta function sum((k + other) ** -input for k >= 0)."""
    f = _no_half("zeta_cpu", lambda q, x: _zeta_q(_zeta_x_no_grad(x), q))
    return f(other, input)
