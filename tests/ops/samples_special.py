"""Samples for the rows in _ops/special.py and _ops/binary_math.py.

Besides random inputs, each row gets the values where PyTorch has its own conventions: poles,
zeros, infinities and nan, and the places where PyTorch's gradient formula is masked."""

import numpy as np

from .harness import A, Const, K, S, Z, backward_error, make
from .harness import err as _err
from .harness import inplace as _inplace
from .harness import method as _method


def err(f):
    return _err(f, chars=60)


def _backward_error(f):
    return backward_error(f, err)


_INF = float("inf")
_NAN = float("nan")


def _special(name):
    return lambda lib, *a, **k: getattr(lib.special, name)(*a, **k)


def _public(lib, name):
    if name.startswith("special_"):
        return getattr(lib.special, name[len("special_"):])
    return getattr(lib, name)


def _int_inplace_error(name):
    return S(make(3, dtype="int64", low=1, high=4),
             call=lambda lib, x: err(lambda: getattr(x.clone(), name + "_")()),
             desc="int in-place cannot hold a float")


def _unary(name, low=-2.0, high=2.0, special=None, method=True, ints=True, f16=True, **tol):
    s = [
        S(make(3, 4, low=low, high=high), **tol),
        S(make(low=low, high=high), desc="0-d", **tol),
        S(make(0, 3, low=low, high=high), desc="empty"),
    ]
    if method:
        s += [
            S(make(2, 5, low=low, high=high), call=_method(name), desc="method", **tol),
            S(make(4, low=low, high=high), call=_inplace(name), desc="in-place", **tol),
            _int_inplace_error(name),
        ]
    if f16 == "error":
        s.append(S(make(3, low=low, high=high).astype("float16"), desc="float16 error",
                   call=lambda lib, x: err(lambda: _public(lib, name)(x))))
    elif f16:
        s.append(S(make(3, low=low, high=high).astype("float16"), atol=2e-3, rtol=2e-3,
                   grad=f16 != "no grad", desc="float16"))
    if ints:
        lo, hi = int(np.ceil(low)), int(np.floor(high)) + 1
        s += [
            S(make(2, 3, dtype="int64", low=lo, high=hi), desc="int64 -> float32", **tol),
            S(make(4, dtype="int32", low=lo, high=hi), desc="int32 -> float32", **tol),
            S(A(True, False, True, dtype="bool"), desc="bool -> float32", **tol),
        ]
    if special is not None:
        s.append(S(special, grad=False, desc="special values", **tol))
    return s


def _binary_float(name, kernel, low=-2.0, high=2.0, inplace=True, **tol):
    """Samples for a binary row that accepts floating inputs only."""
    s = [
        S(make(3, 4, low=low, high=high), make(3, 4, low=low, high=high), **tol),
        S(make(3, 4, low=low, high=high), make(4, low=low, high=high), desc="broadcast", **tol),
        S(make(low=low, high=high), make(2, 1, low=low, high=high), desc="0-d", **tol),
        S(make(0, 2), make(2), desc="empty"),
        S(make(3, low=low, high=high), make(3, low=low, high=high, dtype="float64"),
          desc="float32, float64", **tol),
        S(make(3, low=low, high=high), Z(1.5, "float64"), desc="0-d float64 keeps float32",
          **tol),
        S(make(3, dtype="int64", low=1, high=3), make(3, low=low, high=high),
          desc="int, float", **tol),
        S(make(2, 3, low=low, high=high), make(3, low=low, high=high), call=_method(name),
          desc="method", **tol),
        S(make(2, 3, low=low, high=high).astype("float16"),
          make(2, 3, low=low, high=high).astype("float16"), atol=3e-3, rtol=3e-3,
          desc="float16"),
        S(A(1, 2, dtype="int64"), A(3, 4, dtype="int64"),
          call=lambda lib, a, b: err(lambda: getattr(lib, name)(a, b)), desc="int error"),
        S(A(True, dtype="bool"), A(False, dtype="bool"),
          call=lambda lib, a, b: err(lambda: getattr(lib, name)(a, b)), desc="bool error"),
    ]
    if inplace:
        s.append(S(make(2, 3, low=low, high=high), make(3, low=low, high=high),
                   call=_inplace(name), desc="in-place", **tol))
    return s


def _shift(name, op, rop, iop):
    amounts = A(-3, -1, 0, 1, 7, 8, 31, 63, 64, 65, 100, dtype="int64")
    vals = A(5, -5, 1, -1, 100, -100, 3, -3, 1, 7, -7, dtype="int64")
    return [
        S(vals, amounts, desc="out-of-range and negative shifts"),
        S(vals.astype("int32"), amounts.astype("int32"), desc="int32"),
        S(vals.astype("int8"), amounts.astype("int8"), desc="int8"),
        S(vals.astype("uint8"), amounts.astype("uint8"), desc="uint8"),
        S(vals.astype("int16"), amounts.astype("int16"), desc="int16"),
        S(make(3, 4, dtype="int64", low=-50, high=50), make(4, dtype="int64", low=0, high=8),
          desc="broadcast"),
        S(Z(5, "int64"), A(1, 2, dtype="int64"), desc="0-d"),
        S(A(1, 2, dtype="int32"), A(1, 3, dtype="int64"), desc="int32, int64"),
        S(A(1, 2, dtype="int32"), Z(1, "int64"), desc="0-d int64 keeps int32"),
        S(A(1, -2, dtype="int64"), 2, desc="scalar"),
        S(A(1, -2, dtype="int64"), A(1, 3, dtype="int64"), call=_method(name), desc="method"),
        S(A(1, -2, dtype="int64"), A(1, 3, dtype="int64"), call=_inplace(name),
          desc="in-place"),
        S(A(1, -2, dtype="int64"), A(1, 3, dtype="int64"),
          call=lambda lib, a, b: getattr(a, op)(b), desc=op),
        S(A(1, -2, dtype="int64"), call=lambda lib, a: getattr(a, op)(3), desc=op + " int"),
        S(A(1, 3, dtype="int64"), call=lambda lib, a: getattr(a, rop)(5), desc=rop),
        S(A(1, -2, dtype="int64"), A(1, 3, dtype="int64"),
          call=lambda lib, a, b: _iop(a.clone(), b, iop), desc=iop),
        S(make(3), make(3), call=lambda lib, a, b: err(lambda: getattr(lib, name)(a, b)),
          desc="float error"),
        S(A(True, dtype="bool"), A(True, dtype="bool"),
          call=lambda lib, a, b: err(lambda: getattr(lib, name)(a, b)), desc="bool error"),
    ]


def _iop(a, b, iop):
    """a <<= b (or >>=): the same tensor object, changed in place."""
    before = a
    a = getattr(a, iop)(b)
    return (a is before, a)


# values away from the poles of the gamma family
_POS = dict(low=0.3, high=4.0)

SAMPLES = {
    # -- unary special functions ---------------------------------------------------------------
    "lgamma": _unary("lgamma", special=A(0, -0.0, -1, -2.5, 1, 2, 100, _INF, -_INF, _NAN),
                     **_POS) + [
        S(A(-0.5, -1.5, -2.7, 0.1, 5.5), desc="negative non-integers"),
    ],
    "digamma": _unary("digamma", special=A(0, -0.0, -1, -3, 1, _INF, _NAN), **_POS) + [
        S(A(-0.5, -1.5, -2.7, 0.1, 5.5, 30.0), desc="negative non-integers"),
    ],
    "i0": _unary("i0", low=-3, high=3, special=A(0, _INF, -_INF, _NAN, 50)),
    "sinc": _unary("sinc", special=A(0, 1, -1, 0.5, _INF, _NAN)) + [
        S(A(0.0, -0.0, 1.0, 2.0), desc="0 and the zeros"),
    ],
    "deg2rad": _unary("deg2rad", low=-400, high=400, special=A(_INF, _NAN)),
    "rad2deg": _unary("rad2deg", low=-7, high=7, special=A(_INF, _NAN), atol=1e-4),
    "polygamma": [
        S(make(3, 4, **_POS), call=lambda lib, x: lib.polygamma(1, x), desc="trigamma"),
        S(make(3, **_POS), call=lambda lib, x: lib.polygamma(0, x), desc="n=0"),
        S(make(3, **_POS), call=lambda lib, x: lib.polygamma(2, x), rtol=1e-5, desc="n=2"),
        S(make(4, low=0.5, high=3), call=lambda lib, x: lib.polygamma(3, x), rtol=1e-5,
          desc="n=3"),
        S(Z(1.7), call=lambda lib, x: lib.polygamma(1, x), desc="0-d"),
        S(A(-0.5, -1.5, -2.7, -0.3, 0.2, 0.49, 0.51, 7.0, 40.0),
          call=lambda lib, x: lib.polygamma(1, x), rtol=1e-5, desc="trigamma reflection"),
        S(A(-0.5, -1.5, -2.7, 0.2, 7.0), call=lambda lib, x: lib.polygamma(2, x), rtol=1e-5,
          desc="n=2 negative"),
        S(A(0, -0.0, 1, _INF, _NAN), call=lambda lib, x: lib.polygamma(1, x), grad=False,
          desc="special values"),
        S(A(0, 1, _INF), call=lambda lib, x: lib.polygamma(2, x), grad=False,
          desc="n=2 special values"),
        S(A(1, 2, 3, dtype="int64"), call=lambda lib, x: lib.polygamma(1, x),
          desc="int -> float32"),
        S(make(2, 3, **_POS), call=lambda lib, x: x.polygamma(1), desc="method"),
        S(make(3, **_POS), call=lambda lib, x: x.clone().polygamma_(2), rtol=1e-5,
          desc="in-place"),
        S(make(3, **_POS).astype("float16"), call=lambda lib, x: lib.polygamma(1, x),
          atol=1e-2, rtol=3e-3, desc="float16"),
        S(make(3, **_POS), call=lambda lib, x: err(lambda: lib.polygamma(-1, x)),
          desc="negative n"),
        S(make(0), call=lambda lib, x: lib.polygamma(1, x), desc="empty"),
    ],
    "mvlgamma": [
        S(make(3, 4, low=1.6, high=4), 2),
        S(make(3, low=1.1, high=4), 1, desc="p=1"),
        S(make(2, 3, low=2.1, high=5), 4, desc="p=4"),
        S(Z(3.0), 3, desc="0-d"),
        S(make(2, 3, low=1.6, high=4), 2, call=_method("mvlgamma"), desc="method"),
        S(make(3, low=1.6, high=4), call=lambda lib, x: x.clone().mvlgamma_(p=3),
          desc="in-place"),
        S(A(2, 3, 5, dtype="int64"), 3, desc="int -> float32"),
        S(make(3, low=1.6, high=4), 0,
          call=lambda lib, x, p: err(lambda: lib.mvlgamma(x, p)), desc="p < 1"),
        S(make(3, low=1.6, high=4), call=lambda lib, x: lib.mvlgamma(x, p=2), desc="p="),
    ],
    # -- binary functions ----------------------------------------------------------------------
    "xlogy": [
        S(make(3, 4), make(3, 4, low=0.1, high=3)),
        S(make(3, 4), make(4, low=0.1, high=3), desc="broadcast"),
        S(make(), make(2, 3, low=0.1, high=3), desc="0-d input"),
        S(K(0, 0, 0, 0, 1.5, 2, -1, 0), K(0, 1, _NAN, _INF, 0, -1, 2, -2),
          desc="x = 0 and nan/inf/0 y"),
        S(A(0, 0, 2.5, 1.0), A(0.5, 2, 1.5, 3.0), desc="grad at x = 0"),
        S(K(0, 2.5), K(0, 1.5), desc="x = y = 0: grad nan for y"),
        S(2.5, make(3, low=0.1, high=3), desc="scalar input"),
        S(make(3), 2.5, desc="scalar other"),
        S(A(0, 1, 2, dtype="int64"), A(1, 2, 3, dtype="int64"), desc="int -> float32"),
        S(A(True, False, dtype="bool"), A(True, True, dtype="bool"), desc="bool -> float32"),
        S(A(0, 1, 2, dtype="int64"), make(3, low=0.1, high=3), desc="int, float"),
        S(make(3), make(3, low=0.1, high=3, dtype="float64"), desc="float32, float64"),
        S(make(2, 3), make(3, low=0.1, high=3), call=_method("xlogy"), desc="method"),
        S(make(2, 3), make(3, low=0.1, high=3), call=_inplace("xlogy"), desc="in-place"),
        S(make(2, 3).astype("float16"), make(3, low=0.1, high=3).astype("float16"),
          atol=3e-3, rtol=3e-3, desc="float16"),
        S(make(3), make(3, low=0.1, high=3), call=_special("xlogy"), desc="special.xlogy"),
    ],
    "special_xlog1py": [
        S(make(3, 4), make(3, 4, low=-0.9, high=3)),
        S(make(3, 4), make(4, low=-0.9, high=3), desc="broadcast"),
        S(make(), make(2, 3, low=-0.9, high=3), desc="0-d input"),
        S(K(0, 0, 0, 0, 1.5, 2, -1, 0), K(-1, 1, _NAN, _INF, -1, -2, 2, -2),
          desc="x = 0 and nan/inf/-1 y"),
        S(A(0, 0, 2.5, 1.0), A(0.5, 2, 1.5, 3.0), desc="grad at x = 0"),
        S(K(0, 2.5), K(-1, 1.5), desc="x = 0, y = -1: grad nan for y"),
        S(2.5, make(3, low=-0.9, high=3), desc="scalar input"),
        S(make(3), 2.5, desc="scalar other"),
        S(A(0, 1, 2, dtype="int64"), A(1, 2, 3, dtype="int64"), desc="int -> float32"),
        S(A(True, False, dtype="bool"), A(True, True, dtype="bool"), desc="bool -> float32"),
        S(make(2, 3).astype("float16"), make(3, low=-0.9, high=3).astype("float16"),
          atol=3e-3, rtol=3e-3, desc="float16"),
    ],
    "hypot": _binary_float("hypot", "hypot_cpu") + [
        S(A(0, 3, -3, _INF, _NAN, 1e30), A(0, 4, 0, _NAN, _INF, 1e30), grad=False,
          desc="special values"),
        S(K(0.0, 3.0), K(0.0, -4.0), desc="grad at the origin is nan"),
    ],
    "copysign": [
        S(make(3, 4), make(3, 4)),
        S(make(3, 4), make(4), desc="broadcast"),
        S(make(), make(2, 3), desc="0-d"),
        S(K(0, -0.0, 1.5, -1.5, 2, 3), K(-1, 1, -0.0, 0.0, _NAN, -_INF), desc="signs"),
        S(K(0, -0.0, 1.5, -1.5), K(-1, -1, 1, -1), desc="grad 0 at 0"),
        S(make(3), 2.0, desc="scalar other"),
        S(make(3), -0.0, desc="scalar -0.0"),
        S(A(1, -2, 3, dtype="int64"), A(-1, 1, -1, dtype="int64"), desc="int -> float32"),
        S(A(True, False, dtype="bool"), A(True, True, dtype="bool"), desc="bool -> float32"),
        S(make(3), make(3, dtype="float64"), desc="float32, float64"),
        S(make(2, 3), make(3), call=_method("copysign"), desc="method"),
        S(make(2, 3), make(3), call=_inplace("copysign"), desc="in-place"),
        S(make(3).astype("float16"), make(3).astype("float16"), desc="float16"),
    ],
    "nextafter": _binary_float("nextafter", "nextafter_cpu", rtol=0, atol=0) + [
        S(K(0, 1, 1, -1, _INF, 0, 2), K(1, 2, 0, -_INF, 0, -1, 2), desc="directions",
          rtol=0, atol=0),
        S(A(0, 1, _NAN), A(_NAN, _NAN, 1), desc="nan", grad=False),
        S(K(_INF, -_INF), K(0, 0), desc="from infinities"),
    ],
    "logaddexp": _binary_float("logaddexp", "logaddexp_cpu", low=-5, high=5,
                               inplace=False) + [
        S(A(-_INF, _INF, -_INF, 1, 2, _NAN, 1000), A(-_INF, _INF, 1, -_INF, 2, 1, 1000),
          grad=False, desc="infinities"),
        S(A(1.0, -3.0, 500.0), A(1.0, 20.0, -500.0), desc="ties and far apart"),
    ],
    "logaddexp2": _binary_float("logaddexp2", "logaddexp2_cpu", low=-5, high=5,
                                inplace=False) + [
        S(A(-_INF, _INF, -_INF, 1, 2, _NAN, 1000), A(-_INF, _INF, 1, -_INF, 2, 1, 1000),
          grad=False, desc="infinities"),
        S(A(1.0, -3.0, 500.0), A(1.0, 20.0, -500.0), desc="ties and far apart"),
    ],
    "float_power": [
        S(make(3, 4, low=0.5, high=2), make(3, 4)),
        S(make(3, 4, low=0.5, high=2), make(4), desc="broadcast"),
        S(make(low=0.5, high=2), make(2, 3), desc="0-d"),
        S(make(3, low=0.5, high=2), 2, desc="int exponent"),
        S(make(3, low=0.5, high=2), 0.5, desc="float exponent"),
        S(2.0, make(3), desc="scalar base"),
        S(K(0, 0, 2, -2), K(0, 2, 0, 3), desc="pow masks at 0"),
        S(A(2, 3, -1, dtype="int64"), A(3, 2, 2, dtype="int64"), desc="int -> float64"),
        S(A(True, False, dtype="bool"), A(True, True, dtype="bool"), desc="bool -> float64"),
        S(A(2, 3, dtype="int32"), 0.5, desc="int, scalar float"),
        S(make(3, low=0.5, high=2).astype("float16"), make(3), desc="float16 -> float64"),
        S(make(2, 3, low=0.5, high=2), make(3), call=_method("float_power"), desc="method"),
        S(make(2, 3, low=0.5, high=2, dtype="float64"), make(3),
          call=_inplace("float_power"), desc="in-place float64"),
        S(make(3, low=0.5, high=2, dtype="float64"), A(2, 3, 1, dtype="int32"),
          call=_inplace("float_power"), desc="in-place int exponent"),
        S(make(3, low=0.5, high=2), make(3),
          call=lambda lib, a, b: err(lambda: a.clone().float_power_(b)),
          desc="in-place float32 error"),
        S(make(3, low=0.5, high=2, dtype="float64"),
          call=lambda lib, a: err(lambda: a.clone().float_power_(1j)),
          desc="in-place complex error"),
    ],
    "heaviside": [
        S(A(-1, 0, 2, _NAN, -0.0, _INF), A(0.5, 0.5, 0.5, 0.5, 0.7, 0.5), grad=False),
        S(make(3, 4), make(4), grad=False, desc="broadcast"),
        S(A(-1, 0, 2), Z(0.25), grad=False, desc="0-d values"),
        S(A(-1, 0, 3, dtype="int64"), A(7, 7, 7, dtype="int64"), desc="int"),
        S(A(True, False, dtype="bool"), A(False, True, dtype="bool"), desc="bool"),
        S(A(-1, 0, 2), A(0.5, 0.5, 0.5, dtype="float64"), grad=False,
          call=lambda lib, a, b: err(lambda: lib.heaviside(a, b)), desc="different dtypes"),
        S(A(-1, 0, 2), Z(0.5, "float64"), grad=False,
          call=lambda lib, a, b: err(lambda: lib.heaviside(a, b)), desc="0-d other dtype"),
        S(make(2, 3), make(3), grad=False, call=_method("heaviside"), desc="method"),
        S(A(-1, 0, 2), A(0.5, 0.5, 0.5), grad=False, call=_inplace("heaviside"),
          desc="in-place"),
        S(make(3), make(3), call=_backward_error(lambda lib, a, b: lib.heaviside(a, b)),
          grad=False, desc="heaviside has no derivative"),
    ],
    "fmax": [
        S(make(3, 4), make(3, 4)),
        S(make(3, 4), make(4), desc="broadcast"),
        S(make(), make(2, 3), desc="0-d"),
        S(K(1, _NAN, _NAN, 2, 3, 3), K(_NAN, 1, _NAN, 2, 1, 5), desc="nan and ties"),
        S(A(1, 2, 3, dtype="int64"), A(3, 2, 1, dtype="int64"), desc="int"),
        S(A(True, False, dtype="bool"), A(False, False, dtype="bool"), desc="bool"),
        S(A(1, 2, 3, dtype="int64"), make(3), desc="int, float"),
        S(make(2, 3), make(3), call=_method("fmax"), desc="method"),
        S(make(3).astype("float16"), make(3).astype("float16"), desc="float16"),
    ],
    "fmin": [
        S(make(3, 4), make(3, 4)),
        S(make(3, 4), make(4), desc="broadcast"),
        S(make(), make(2, 3), desc="0-d"),
        S(K(1, _NAN, _NAN, 2, 3, 3), K(_NAN, 1, _NAN, 2, 1, 5), desc="nan and ties"),
        S(A(1, 2, 3, dtype="int64"), A(3, 2, 1, dtype="int64"), desc="int"),
        S(A(True, False, dtype="bool"), A(False, False, dtype="bool"), desc="bool"),
        S(A(1, 2, 3, dtype="int64"), make(3), desc="int, float"),
        S(make(2, 3), make(3), call=_method("fmin"), desc="method"),
        S(make(3).astype("float16"), make(3).astype("float16"), desc="float16"),
    ],
    "signbit": [
        S(A(-0.0, 0, -1, 1, _NAN, -_NAN, _INF, -_INF)),
        S(make(3, 4), desc="random"),
        S(make(), desc="0-d"),
        S(A(-3, 0, 4, dtype="int64"), desc="int"),
        S(A(250, 0, dtype="uint8"), desc="uint8"),
        S(A(True, False, dtype="bool"), desc="bool"),
        S(make(2, 3), call=_method("signbit"), desc="method"),
        S(make(3).astype("float16"), desc="float16"),
    ],
    "ldexp": [
        S(make(3, 4), make(3, 4, low=-3, high=3)),
        S(make(3, 4), make(4), desc="broadcast"),
        S(make(), make(2, 3), desc="0-d"),
        # PyTorch's gradient is 0 for negative integer exponents (no finite differences)
        S(K(1.5, -2, 3), K(1, -2, 5, dtype="int64"), desc="int exponent"),
        S(A(1, 3, dtype="int64"), A(2, 3, dtype="int64"), desc="int -> float32"),
        S(A(1, 3, dtype="float16"), A(2, 3, dtype="int64"), desc="float16, int"),
        S(A(True, False, dtype="bool"), A(2, 3, dtype="int64"), desc="bool, int"),
        S(make(3), make(3, dtype="float64"), desc="float32, float64"),
        S(make(2, 3), make(3), call=_method("ldexp"), desc="method"),
        S(make(2, 3), make(3), call=_inplace("ldexp"), desc="in-place"),
        S(K(1.5, -2, 3), K(1, -2, 5, dtype="int64"), call=_inplace("ldexp"), desc="in-place int"),
        S(make(3), Z(3, "int64"), call=_inplace("ldexp"), desc="0-d exponent"),
        S(A(1, 2, dtype="int64"), A(1, 2, dtype="int64"),
          call=lambda lib, a, b: err(lambda: a.clone().ldexp_(b)), desc="in-place int error"),
        S(make(3, dtype="float64"), make(3), call=_inplace("ldexp"), desc="in-place float64"),
    ],
    "gcd": [
        S(A(0, -4, 6, -9, 0, 12, 7, dtype="int64"), A(0, 6, -4, -6, 5, 18, 13, dtype="int64")),
        S(make(3, 4, dtype="int64", low=-20, high=20), make(4, dtype="int64", low=-20, high=20),
          desc="broadcast"),
        S(Z(12, "int32"), A(8, 9, 6, dtype="int32"), desc="0-d int32"),
        S(A(12, 9, dtype="uint8"), A(18, 6, dtype="uint8"), desc="uint8"),
        S(A(12, 9, dtype="int64"), A(18, 6, dtype="int64"), call=_method("gcd"), desc="method"),
        S(A(12, 9, dtype="int64"), A(18, 6, dtype="int64"), call=_inplace("gcd"),
          desc="in-place"),
        S(make(3), make(3), call=lambda lib, a, b: err(lambda: lib.gcd(a, b)),
          desc="float error"),
        S(A(True, dtype="bool"), A(False, dtype="bool"),
          call=lambda lib, a, b: err(lambda: lib.gcd(a, b)), desc="bool error"),
    ],
    "lcm": [
        S(A(0, -4, 6, -9, 0, 12, 7, dtype="int64"), A(0, 6, -4, -6, 5, 18, 13, dtype="int64")),
        S(make(3, 4, dtype="int64", low=-20, high=20), make(4, dtype="int64", low=-20, high=20),
          desc="broadcast"),
        S(Z(12, "int32"), A(8, 9, 6, dtype="int32"), desc="0-d int32"),
        S(A(12, 9, dtype="int16"), A(18, 6, dtype="int16"), desc="int16"),
        S(A(12, 9, dtype="int64"), A(18, 6, dtype="int64"), call=_method("lcm"), desc="method"),
        S(A(12, 9, dtype="int64"), A(18, 6, dtype="int64"), call=_inplace("lcm"),
          desc="in-place"),
        S(make(3), make(3), call=lambda lib, a, b: err(lambda: lib.lcm(a, b)),
          desc="float error"),
    ],
    "bitwise_left_shift": _shift("bitwise_left_shift", "__lshift__", "__rlshift__",
                                 "__ilshift__"),
    "bitwise_right_shift": _shift("bitwise_right_shift", "__rshift__", "__rrshift__",
                                  "__irshift__"),
    "nan_to_num": [
        S(K(_NAN, _INF, -_INF, 1.5, -2)),
        S(K(_NAN, _INF, -_INF, 1.5), nan=1.0, posinf=9.0, neginf=-9.0, desc="keywords"),
        S(K(_NAN, _INF, -_INF, 1.5), posinf=3.0, desc="posinf only"),
        S(K(_NAN, _INF, -_INF, 1.5, dtype="float16"), desc="float16 extremes"),
        S(make(3, 4), desc="finite"),
        S(Z(_NAN), desc="0-d"),
        S(A(1, -2, dtype="int64"), desc="int unchanged"),
        S(A(True, False, dtype="bool"), desc="bool unchanged"),
        S(K(_NAN, _INF, 2.0), call=lambda lib, x: x.nan_to_num(0.5), desc="method"),
        S(K(_NAN, _INF, 2.0), call=lambda lib, x: x.clone().nan_to_num_(neginf=0.0),
          desc="in-place"),
    ],
    "addcmul": [
        S(make(3, 4), make(3, 4), make(3, 4)),
        S(make(3, 4), make(4), make(3, 1), value=0.5, desc="broadcast, value"),
        S(make(), make(2), make(2), value=-2, desc="0-d input"),
        S(A(1, 2, dtype="int64"), A(3, 4, dtype="int64"), A(5, 6, dtype="int64"), value=2,
          desc="int"),
        S(A(1, 2, dtype="int64"), A(3, 4, dtype="int64"), A(5, 6, dtype="int64"), value=2.5,
          desc="int, float value truncates"),
        S(A(1, 2, dtype="int64"), make(2), make(2), desc="int input, float tensors"),
        S(make(2, 3), make(3), make(3), call=lambda lib, a, b, c: a.addcmul(b, c, value=3),
          desc="method"),
        S(make(2, 3), make(3), make(3), call=lambda lib, a, b, c: a.clone().addcmul_(b, c),
          desc="in-place"),
    ],
    "addcdiv": [
        S(make(3, 4), make(3, 4), make(3, 4, low=0.5, high=2)),
        S(make(3, 4), make(4), make(3, 1, low=0.5, high=2), value=0.5,
          desc="broadcast, value"),
        S(make(), make(2), make(2, low=0.5, high=2), value=-2, desc="0-d input"),
        # PyTorch's backward fails here ("result type Float can't be cast"): values only
        S(A(1, 2, dtype="int64"), make(2), A(3, 4, dtype="int64"), grad=False,
          desc="int input, tensor1"),
        S(make(2), A(3, 4, dtype="int64"), A(5, 6, dtype="int64"),
          call=lambda lib, a, b, c: err(lambda: lib.addcdiv(a, b, c)),
          desc="integer division error"),
        S(make(3), make(3), make(3, low=0.5, high=2, dtype="float64"),
          desc="float32, float64"),
        S(make(3), make(3), Z(2.0, "float64"), desc="0-d float64 divisor"),
        S(make(2, 3), make(3), make(3, low=0.5, high=2),
          call=lambda lib, a, b, c: a.addcdiv(b, c, value=3), desc="method"),
        S(make(2, 3), make(3), make(3, low=0.5, high=2),
          call=lambda lib, a, b, c: a.clone().addcdiv_(b, c, value=0.25), desc="in-place"),
    ],
    "logit": _unary("logit", low=0.05, high=0.95, ints=False) + [
        S(A(0, 1, -0.5, 1.5, 0.5, _NAN), grad=False, desc="special values"),
        S(K(0.0, 0.3, 1.0, -0.1, 1.2), desc="grad outside [0, 1] is nan"),
        S(K(0.0, 0.1, 0.25, 0.3, 0.75, 0.9, 1.0, 1.2, -0.1), eps=0.25, desc="eps"),
        S(make(3, 4, low=0.05, high=0.95), 1e-6, desc="eps positional"),
        S(A(0, 1, 2, dtype="int64"), eps=0.25, desc="int -> float32"),
        S(A(0.1, 0.5, 0.9), call=lambda lib, x: x.logit(0.2), desc="method eps"),
        S(A(0.1, 0.5, 0.9), call=lambda lib, x: x.clone().logit_(eps=0.2), desc="in-place eps"),
        S(A(0.1, 0.5, 0.9), call=_special("logit"), desc="special.logit"),
    ],
    # -- torch.special rows --------------------------------------------------------------------
    "special_erfcx": _unary("special_erfcx", f16="error", low=-3, high=5, method=False) + [
        S(A(-30, -5, 0, 5, 9, 12, 30, 1e5, _INF, -_INF, _NAN), grad=False,
          desc="tails and special values"),
        S(A(-3.0, 0.0, 7.0, 20.0), desc="grad in the tails"),
    ],
    "special_ndtr": _unary("special_ndtr", low=-4, high=4, method=False) + [
        S(A(-40, -8, 0, 8, 40, _INF, -_INF, _NAN), grad=False, desc="special values"),
    ],
    "special_ndtri": _unary("special_ndtri", f16="error", low=0.01, high=0.99, method=False, ints=False) + [
        S(A(0, 1, -0.5, 1.5, 0.5, 1e-10, 1 - 1e-7, _NAN), grad=False, desc="special values"),
        S(A(0, 1, 2, dtype="int64"), desc="int -> float32"),
        S(A(True, False, dtype="bool"), desc="bool -> float32"),
    ],
    "special_log_ndtr": _unary("special_log_ndtr", f16="error", low=-5, high=5, method=False) + [
        S(A(-40, -8, -1.5, -1, 0, 7.9, 8, 40, _INF, -_INF, _NAN), grad=False,
          desc="tails and special values"),
        S(A(-20.0, -1.0, 6.0), desc="grad in the tails"),
    ],
    "special_i0e": _unary("special_i0e", low=-5, high=5, method=False) + [
        S(A(0, 50, -50, _INF, -_INF, _NAN), grad=False, desc="special values"),
        S(K(0.0, -0.0, 1e-30), desc="grad at 0"),
    ],
    "special_i1": _unary("special_i1", low=-5, high=5, method=False, f16="no grad") + [
        S(A(0.5, 2, dtype="float16"), desc="float16 has no backward",
          call=_backward_error(lambda lib, x: lib.special.i1(x))),
        S(A(0, 20, -20, _INF, -_INF, _NAN), grad=False, desc="special values"),
        S(K(0.0, -0.0, 1e-30, 1e-3), desc="grad at 0 is 0.5"),
    ],
    "special_i1e": _unary("special_i1e", low=-5, high=5, method=False, f16="no grad") + [
        S(A(0.5, 2, dtype="float16"), desc="float16 has no backward",
          call=_backward_error(lambda lib, x: lib.special.i1e(x))),
        S(A(0, 50, -50, _INF, -_INF, _NAN), grad=False, desc="special values"),
        S(K(0.0, -0.0, 1e-30, 1e-3), desc="grad at 0 is 0.5"),
    ],
    "special_entr": _unary("special_entr", low=0.05, high=3, method=False, ints=False) + [
        S(A(0, -1, _INF, _NAN, 1, 2), grad=False, desc="special values"),
        S(K(0.0, -1.0, 0.5), desc="grad at 0 and below"),
        S(A(0, 1, 2, -1, dtype="int64"), desc="int -> float32"),
        S(A(True, False, dtype="bool"), desc="bool -> float32"),
    ],
    "special_round": [
        S(K(0.5, 1.5, 2.5, -0.5, -1.5, 1.25, 2.675)),
        S(make(3, 4, low=-10, high=10), desc="random"),
        S(make(), desc="0-d"),
        S(K(1.25, 2.675, -3.14159), decimals=2, desc="decimals"),
        S(K(1234.5, 1250.0), decimals=-2, desc="negative decimals"),
        S(K(1.25, 0.5, dtype="float16"), desc="float16"),
        S(A(1, 2, dtype="int64"), call=lambda lib, x: err(lambda: lib.special.round(x)),
          desc="int error"),
        S(A(1, 2, dtype="int64"),
          call=lambda lib, x: err(lambda: lib.special.round(x, decimals=1)),
          desc="int error with decimals"),
    ],
    "special_zeta": [
        S(Const(make(3, 4, low=1.5, high=5)), make(3, 4, low=0.5, high=3)),
        S(Const(make(4, low=1.5, high=5)), make(3, 1, low=0.5, high=3), desc="broadcast"),
        S(2.5, make(2, 3, low=0.5, high=3), desc="scalar x"),
        S(Const(make(3, low=1.5, high=5)), 2.0, desc="scalar q"),
        S(Const(Z(3.0)), make(low=0.5, high=3), desc="0-d"),
        S(A(0.5, 1, 1.5, 2, 3, 2, 2, 3.5, 2), A(1, 1, 1, 1, 1, 0, -2, -2, -1.5), grad=False,
          desc="x <= 1 and q <= 0"),
        S(A(2, 3, 4, dtype="int64"), A(1, 2, 3, dtype="int64"), desc="int -> float32"),
        S(Const(A(2.0, 3.0)), A(1, 2, dtype="int64"), desc="float, int"),
        S(make(3, low=1.5, high=5), make(3, low=0.5, high=3),
          call=_backward_error(lambda lib, x, q: lib.special.zeta(x, q)), grad=False,
          desc="no derivative for x"),
        S(A(2, 3, dtype="float16"), A(1, 2, dtype="float16"), grad=False,
          call=lambda lib, x, q: err(lambda: lib.special.zeta(x, q)), desc="float16 error"),
    ],
}
