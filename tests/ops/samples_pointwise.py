"""Samples for the elementwise rows (arithmetic, math, rounding, clamping, comparisons, logic).

Besides random inputs, each row is fed the cases where PyTorch and JAX disagree (PITFALLS.md):
kinks and ties, rounding, signs of remainders, promotion with 0-d tensors and Python scalars.
"""

import numpy as np

from .harness import A, K, S, Z, backward_error, err, make
from .harness import inplace as _inplace
from .harness import method as _method

_backward_error = backward_error


# -- unary math --------------------------------------------------------------------------------

def _unary(name, low=-2.0, high=2.0, ints=True, special=None):
    s = [
        S(make(3, 4, low=low, high=high)),
        S(make(low=low, high=high), desc="0-d"),
        S(make(0, 3, low=low, high=high), desc="empty"),
        S(make(2, 5, low=low, high=high), call=_method(name), desc="method"),
        S(make(4, low=low, high=high), call=_inplace(name), desc="in-place"),
        S(make(3, low=low, high=high).astype("float16"), atol=2e-3, rtol=2e-3, desc="float16"),
    ]
    if ints:
        lo, hi = int(np.ceil(low)), int(np.floor(high)) + 1
        s += [
            S(make(2, 3, dtype="int64", low=lo, high=hi), desc="int64 -> float32"),
            S(make(4, dtype="int32", low=lo, high=hi), desc="int32 -> float32"),
            S(make(5, dtype="uint8", low=max(lo, 0), high=max(hi, 1)), desc="uint8"),
            S(make(3, dtype="int64", low=lo, high=hi),
              call=lambda lib, x: err(lambda: getattr(x.clone(), name + "_")()),
              desc="int in-place cannot hold a float"),
        ]
        if low <= 0 <= 1 <= high:
            s.append(S(A(True, False, True, dtype="bool"), desc="bool -> float32"))
    if special is not None:
        s.append(S(special, desc="special values"))
    return s


_INF = float("inf")
_NAN = float("nan")

# -- samples ---------------------------------------------------------------------------------------

SAMPLES = {}


def _unaries():
    pos = dict(low=0.1, high=3.0)
    unit = dict(low=-0.9, high=0.9)
    table = {
        "exp": dict(special=K(0, -_INF, _INF, 100, -100)),
        "exp2": {},
        "log": dict(pos, special=K(0, 1, _INF)),
        "log2": pos,
        "log10": pos,
        "log1p": dict(low=-0.9, high=3.0),
        "expm1": {},
        "sqrt": dict(pos, special=K(0.0, 4.0, 1e-30, dtype="float64")),
        "rsqrt": pos,
        "sin": {}, "cos": {}, "tan": dict(low=-1.2, high=1.2),
        "asin": unit, "acos": unit, "atan": {},
        "sinh": {}, "cosh": {}, "tanh": dict(special=K(-50, 50, 0)),
        "asinh": {}, "acosh": dict(low=1.1, high=4.0), "atanh": unit,
        "sigmoid": dict(special=K(-100, 100, 0)),
        "erf": {}, "erfc": {}, "erfinv": unit,
    }
    for name, kw in table.items():
        SAMPLES[name] = _unary(name, **kw)
    for name in ("log", "log2", "log10", "sqrt", "rsqrt", "acosh"):
        SAMPLES[name][1] = S(make(low=1.1, high=3.0), desc="0-d")
    SAMPLES["log"].append(S(A(-1.0, 0.0), grad=False, desc="log of negative is nan"))
    SAMPLES["sqrt"].append(S(A(-1.0), grad=False, desc="sqrt of negative is nan"))
    # torch has no derivative for these in-place forms (it raises); compare the values only
    for name in ("asinh", "acosh", "atanh"):
        SAMPLES[name][4].grad = False


_unaries()

def _iadd(a, b):
    a += b
    return a


SAMPLES.update({
    # -- arithmetic --------------------------------------------------------------------------
    "add": [
        S(make(3, 4), make(3, 4)),
        S(make(3, 4), make(4), desc="broadcast"),
        S(make(2, 1, 3), make(4, 1), desc="broadcast both"),
        S(make(), make(3), desc="0-d + 1-d"),
        S(make(), make(), desc="0-d + 0-d"),
        S(make(3, 4), 2.5, desc="python float"),
        S(make(3, 4), 2, desc="python int"),
        S(make(3, 4), True, desc="python bool"),
        S(make(3, 4), make(3, 4), alpha=2.5),
        S(make(3, 4, dtype="int64", low=-9, high=9), make(4, dtype="int64", low=-9, high=9),
          alpha=3),
        S(make(3, dtype="int64"), 2.5, desc="int + python float -> float32"),
        S(make(3, dtype="int32"), 7, desc="int32 + python int stays int32"),
        S(make(3, dtype="int32"), make(3, dtype="int64"), desc="int32 + int64"),
        S(A(True, False, True, dtype="bool"), A(True, True, False, dtype="bool")),
        S(A(True, False, dtype="bool"), 1, desc="bool + int -> int64"),
        S(A(200, 100, 255, dtype="uint8"), A(100, 200, 1, dtype="uint8"), desc="uint8 wraps"),
        S(A(250, dtype="uint8"), 10, desc="uint8 + python int wraps"),
        S(make(3).astype("float16"), 0.1, atol=1e-3, desc="float16 + python float"),
        S(make(3, dtype="int32"), Z(5, "int64"), desc="int32 + int64 0-d stays int32"),
        S(make(3), Z(0.5, "float64"), desc="float32 + float64 0-d stays float32"),
        S(make(3, dtype="int64"), Z(0.5, "float64"), desc="int64 + float64 0-d -> float64"),
        S(Z(3, "int64"), make(3).astype("float16"), desc="int 0-d + float16 -> float16"),
        S(make(3), make(3).astype("float64"), desc="float32 + float64 -> float64"),
        S(make(2, 3), make(3), call=lambda lib, a, b: a + b, desc="a + b"),
        S(make(2, 3), call=lambda lib, a: 2 + a, desc="2 + a"),
        S(make(2, 3), call=lambda lib, a: a + 2.5, desc="a + 2.5"),
        S(make(2, 3), make(3), call=lambda lib, a, b: a.add(b, alpha=-1)),
        S(make(2, 3), make(3), call=lambda lib, a, b: a.clone().add_(b), desc="add_"),
        S(make(2, 3), make(3), call=lambda lib, a, b: a.clone().add_(b, alpha=2)),
        S(make(2, 3), call=lambda lib, a: a.clone().add_(1), desc="add_ scalar"),
        S(make(2, 3), make(3), call=lambda lib, a, b: _iadd(a.clone(), b), desc="a += b"),
        S(make(3, dtype="int64"), make(3),
          call=lambda lib, a, b: err(lambda: a.add_(b)), desc="int += float errors"),
        S(make(3), make(2, 3), call=lambda lib, a, b: err(lambda: a.clone().add_(b)),
          grad=False, desc="in-place cannot broadcast self"),
        S(make(3), make(4), call=lambda lib, a, b: err(lambda: a + b), grad=False,
          desc="shape mismatch"),
        S(make(3, dtype="int64"), make(3, dtype="int64"),
          call=lambda lib, a, b: err(lambda: lib.add(a, b, alpha=0.5)),
          desc="float alpha with ints"),
    ],
    "sub": [
        S(make(3, 4), make(3, 4)),
        S(make(3, 4), make(4), desc="broadcast"),
        S(make(), make(2, 2), desc="0-d"),
        S(make(3, 4), 2.5),
        S(make(3, 4), make(3, 4), alpha=0.5),
        S(make(3, 4, dtype="int64", low=-9, high=9), make(4, dtype="int64"), alpha=2),
        S(A(5, 0, dtype="uint8"), A(10, 1, dtype="uint8"), desc="uint8 wraps"),
        S(make(3, dtype="int64"), Z(0.5, "float64"), desc="int64 - float64 0-d"),
        S(make(3), make(3), call=lambda lib, a, b: lib.subtract(a, b), desc="subtract"),
        S(make(2, 3), make(3), call=lambda lib, a, b: a - b, desc="a - b"),
        S(make(2, 3), call=lambda lib, a: a - 1.5, desc="a - 1.5"),
        S(make(2, 3), make(3), call=lambda lib, a, b: a.clone().sub_(b), desc="sub_"),
        S(make(2, 3), make(3), call=lambda lib, a, b: a.clone().subtract_(b)),
        S(A(True, False, dtype="bool"), A(True, True, dtype="bool"),
          call=lambda lib, a, b: err(lambda: a - b), desc="bool - bool errors"),
    ],
    "rsub": [
        S(make(3, 4), make(3, 4)),
        S(make(3, 4), make(4), alpha=2.0),
        S(make(3, 4), 2.5),
        S(make(3, dtype="int64"), 3),
        S(make(2, 3), call=lambda lib, a: 2 - a, desc="2 - a"),
        S(make(2, 3, dtype="int64"), call=lambda lib, a: 2 - a, desc="2 - int"),
        S(make(2, 3), call=lambda lib, a: 2.5 - a, desc="2.5 - a"),
        S(A(1, 2, dtype="uint8"), call=lambda lib, a: 1 - a, desc="uint8 wraps"),
        S(make(3).astype("float16"), call=lambda lib, a: 0.3 - a, atol=1e-3),
    ],
    "mul": [
        S(make(3, 4), make(3, 4)),
        S(make(3, 4), make(4), desc="broadcast"),
        S(make(2, 1, 3), make(4, 1), desc="broadcast both"),
        S(make(), make(3), desc="0-d"),
        S(make(3, 4), 2.5),
        S(make(3, 4, dtype="int64", low=-9, high=9), make(4, dtype="int64", low=-9, high=9)),
        S(A(True, False, True, dtype="bool"), A(True, True, False, dtype="bool")),
        S(A(20, 16, dtype="uint8"), A(13, 16, dtype="uint8"), desc="uint8 wraps"),
        S(make(3, dtype="int32"), Z(5, "int64"), desc="int32 * int64 0-d"),
        S(make(3), Z(2.0, "float64"), desc="float32 * float64 0-d"),
        S(make(3, dtype="int64"), 0.5, desc="int * python float"),
        S(make(3).astype("float16"), 1.1, atol=3e-3, desc="float16 * python float"),
        S(make(3), make(3), call=lambda lib, a, b: lib.multiply(a, b)),
        S(make(2, 3), make(3), call=lambda lib, a, b: a * b, desc="a * b"),
        S(make(2, 3), call=lambda lib, a: 3 * a, desc="3 * a"),
        S(make(2, 3), make(2, 3), call=lambda lib, a, b: a * a, desc="a * a"),
        S(make(2, 3), make(3), call=lambda lib, a, b: a.clone().mul_(b), desc="mul_"),
        S(make(2, 3), call=lambda lib, a: a.clone().mul_(2.0), desc="mul_ scalar"),
        S(make(2, 3), make(3), call=lambda lib, a, b: a.clone().multiply_(b)),
    ],
    "_rtruediv": [
        S(make(2, 3, low=0.5, high=2), call=lambda lib, a: 2 / a, desc="2 / a"),
        S(make(2, 3, dtype="int64", low=1, high=5), call=lambda lib, a: 2 / a,
          desc="2 / int"),
        S(make(3, low=0.5, high=2), call=lambda lib, a: 2.5 / a, desc="2.5 / a"),
    ],
    "div": [
        S(make(3, 4), make(3, 4, low=0.5, high=2)),
        S(make(3, 4), make(4, low=0.5, high=2), desc="broadcast"),
        S(make(), make(3, low=0.5, high=2), desc="0-d"),
        S(make(3, 4), 2.5),
        S(A(7, -7, 7, -7, 6, dtype="int64"), A(2, 2, -2, -2, 3, dtype="int64"),
          desc="int / int -> float32"),
        S(A(7, -7, 7, -7, 0, dtype="int64"), A(2, 2, -2, -2, 3, dtype="int64"),
          rounding_mode="trunc"),
        S(A(7, -7, 7, -7, 0, dtype="int64"), A(2, 2, -2, -2, 3, dtype="int64"),
          rounding_mode="floor"),
        S(A(7, -7, 7, -7, 1, dtype="int32"), 2, rounding_mode="floor"),
        S(K(7.5, -7.5, 7, -7, 0.5), K(2, 2, -2, -2, 0.25), rounding_mode="trunc"),
        S(K(7.5, -7.5, 7, -7, 0.5), K(2, 2, -2, -2, 0.25), rounding_mode="floor"),
        S(A(1.0, -1.0, 0.0), A(0.0, 0.0, 0.0), grad=False, desc="division by zero"),
        S(A(7, 9, dtype="uint8"), A(2, 4, dtype="uint8"), rounding_mode="floor"),
        S(make(3, dtype="int64"), Z(2.0, "float64"), desc="int64 / float64 0-d"),
        S(make(3, dtype="int32"), Z(2, "int64"), rounding_mode="floor"),
        S(make(3), make(3, low=1, high=2), call=lambda lib, a, b: lib.divide(a, b)),
        S(make(2, 3), make(3, low=1, high=2), call=lambda lib, a, b: a / b, desc="a / b"),
        S(make(2, 3), make(3, low=1, high=2), call=lambda lib, a, b: a.clone().div_(b)),
        S(make(2, 3), make(3, low=1, high=2),
          call=lambda lib, a, b: a.clone().div_(b, rounding_mode="floor")),
        S(make(3, dtype="int64"), make(3, dtype="int64", low=1, high=4),
          call=lambda lib, a, b: err(lambda: a.div_(b)), desc="int /= int errors"),
        S(make(3), make(3), call=lambda lib, a, b: err(lambda: lib.div(a, b,
                                                                         rounding_mode="x")),
          grad=False),
    ],
    "true_divide": [
        S(make(3, 4), make(3, 4, low=0.5, high=2)),
        S(A(7, -7, dtype="int64"), A(2, 2, dtype="int64")),
        S(make(3), 2),
        S(make(3), make(3, low=1, high=2), call=lambda lib, a, b: a.true_divide(b)),
        S(make(3), make(3, low=1, high=2), call=lambda lib, a, b: a.clone().true_divide_(b)),
    ],
    # torch records floor_divide with a grad_fn that raises in backward: values only here
    "floor_divide": [
        S(A(7, -7, 7, -7, 0, dtype="int64"), A(2, 2, -2, -2, 3, dtype="int64")),
        S(K(7.5, -7.5, 7, -7, 0.5), K(2, 2, -2, -2, 0.25)),
        S(make(3, 4), make(4, low=0.5, high=2)),
        S(A(7, -7, dtype="int32"), 2),
        S(A(7, -7, dtype="int64"), 2.5),
        S(A(7, 9, dtype="uint8"), A(2, 4, dtype="uint8")),
        S(A(7, -7, dtype="int64"), A(2, 2, dtype="int64"), call=lambda lib, a, b: a // b),
        S(A(7, -7, dtype="int64"), call=lambda lib, a: 20 // a),
        S(A(7.5, -7.5), call=lambda lib, a: a // 2),
        S(A(7, -7, dtype="int64"), A(2, 2, dtype="int64"),
          call=lambda lib, a, b: a.clone().floor_divide_(b)),
        S(make(3), make(3), call=_backward_error(lambda lib, a, b: lib.floor_divide(a, b)),
          grad=False, desc="floor_divide has no derivative"),
    ],
    "remainder": [
        S(K(5.5, -5.5, 5.5, -5.5, 3, -3), K(2, 2, -2, -2, 3, 3), desc="sign of divisor"),
        S(A(7, -7, 7, -7, 0, dtype="int64"), A(3, 3, -3, -3, 5, dtype="int64")),
        S(make(3, 4), make(4, low=0.5, high=2)),
        S(make(3, 4), 1.5),
        S(A(7, -7, dtype="int32"), 3),
        S(A(7, -7, dtype="int64"), 2.5),
        S(A(7, 9, dtype="uint8"), A(2, 4, dtype="uint8")),
        S(make(2, 3), make(3, low=0.5, high=2), call=lambda lib, a, b: a % b),
        S(make(2, 3), call=lambda lib, a: a % 0.7),
        S(make(2, 3, low=0.5, high=2), call=lambda lib, a: 3 % a, grad=False,
          desc="3 % a (no derivative in torch)"),
        S(make(2, 3), make(3, low=0.5, high=2), call=lambda lib, a, b: a.clone().remainder_(b)),
    ],
    "fmod": [
        S(K(5.5, -5.5, 5.5, -5.5, 3, -3), K(2, 2, -2, -2, 3, 3), desc="sign of dividend"),
        S(A(7, -7, 7, -7, 0, dtype="int64"), A(3, 3, -3, -3, 5, dtype="int64")),
        S(make(3, 4), make(4, low=0.5, high=2)),
        S(make(3, 4), 1.5),
        S(A(7, -7, dtype="int32"), 3),
        S(A(7, -7, dtype="int64"), 2.5),
        S(make(2, 3), make(3, low=0.5, high=2), call=lambda lib, a, b: a.fmod(b)),
        S(make(2, 3), make(3, low=0.5, high=2), call=lambda lib, a, b: a.clone().fmod_(b)),
    ],
    "pow": [
        S(make(3, 4, low=0.5, high=2), make(3, 4)),
        S(make(3, 4, low=0.5, high=2), make(4), desc="broadcast"),
        S(make(3, 4), 2),
        S(make(3, 4), 3.0),
        S(make(3, 4, low=0.5, high=2), 0.5),
        S(make(3, 4), 0),
        S(A(0.0, 1.0, -1.0, 2.0), 2, desc="at zero"),
        S(K(0.0, 1.0, 2.0), K(0.0, 2.0, 0.5), desc="0 ** 0"),
        S(A(2, 3, -2, dtype="int64"), 3, desc="int ** int"),
        S(A(2, 3, -2, dtype="int64"), A(3, 2, 1, dtype="int64")),
        S(A(2, 3, dtype="int64"), 0.5, desc="int ** float -> float32"),
        S(A(2, 3, dtype="int32"), Z(2, "int64"), desc="int32 ** int64 0-d"),
        S(A(16, 3, dtype="uint8"), 2, desc="uint8 wraps"),
        S(make(3, low=0.5, high=2), Z(2.0, "float64")),
        S(make(3).astype("float16"), 2, atol=1e-3),
        S(make(2, 3, low=0.5, high=2), make(3), call=lambda lib, a, b: a ** b),
        S(make(2, 3), call=lambda lib, a: a ** 2, desc="a ** 2"),
        S(make(2, 3), call=lambda lib, a: 2 ** a, desc="2 ** a"),
        S(make(2, 3), call=lambda lib, a: 2.5 ** a, desc="2.5 ** a"),
        S(A(1, 2, 3, dtype="int64"), call=lambda lib, a: 2 ** a, desc="2 ** int"),
        S(A(1, 2, 3, dtype="int64"), call=lambda lib, a: 2.0 ** a, desc="2.0 ** int"),
        S(make(2, 3, low=0.5, high=2), make(3), call=lambda lib, a, b: a.clone().pow_(b)),
        S(make(2, 3), call=lambda lib, a: a.clone().pow_(2)),
        S(A(2, 3, dtype="int64"), A(-1, 2, dtype="int64"),
          call=lambda lib, a, b: err(lambda: a ** b), desc="int ** negative int errors"),
        S(make(2, 3, low=0.5, high=2), call=lambda lib, a: lib.pow(2, a), desc="pow(2, a)"),
    ],
    "neg": [
        S(make(3, 4)), S(make()), S(make(3, dtype="int64")), S(A(1, 200, dtype="uint8")),
        S(make(3), call=lambda lib, a: -a), S(make(3), call=lambda lib, a: lib.negative(a)),
        S(make(3), call=lambda lib, a: a.clone().neg_()),
        S(A(True, dtype="bool"), call=lambda lib, a: err(lambda: -a)),
        # positive is a composite returning its argument itself
        S(make(3), call=lambda lib, a: (lib.positive(a) is a, (+a) is a, a.positive() is a)),
        S(make(3), call=lambda lib, a: lib.positive(a * 1) * 2, desc="positive: grad flows"),
        S(A(1, 2, dtype="int64"), call=lambda lib, a: +a),
        S(A(True, dtype="bool"), call=lambda lib, a: err(lambda: lib.positive(a))),
    ],
    "abs": [
        S(make(3, 4)), S(make()),
        S(K(-1.0, 0.0, 2.0, -0.0), desc="abs'(0) = 0"),
        S(A(-3, 0, 4, dtype="int64")), S(A(-128, 5, dtype="int8"), desc="int8 wraps"),
        S(A(True, False, dtype="bool"), call=lambda lib, a: err(lambda: lib.abs(a))),
        S(make(3), call=lambda lib, a: abs(a)),
        S(make(3), call=lambda lib, a: lib.absolute(a)),
        S(K(-1.0, 0.0, 2.0), call=lambda lib, a: a.clone().abs_()),
    ],
    "reciprocal": [
        S(make(3, 4, low=0.5, high=2)), S(make(low=0.5, high=2)),
        S(A(2, 4, -1, dtype="int64"), desc="int -> float32"),
        S(A(0.0, -0.0, _INF), grad=False),
        S(make(3, low=0.5, high=2), call=lambda lib, a: a.clone().reciprocal_()),
    ],
    "square": [
        S(make(3, 4)), S(make()), S(A(3, -4, dtype="int64")), S(A(20, 3, dtype="uint8")),
        S(A(True, False, dtype="bool")),
        S(make(3), call=lambda lib, a: a.square()),
        S(make(3), call=lambda lib, a: a.clone().square_()),
    ],
    "atan2": [
        S(make(3, 4), make(3, 4)), S(make(3, 4), make(4)), S(make(), make(2)),
        S(A(1.0, 1.0, -1.0, -1.0, 0.0), A(1.0, -1.0, 1.0, -1.0, 1.0), desc="quadrants"),
        S(A(1, -2, dtype="int64"), A(3, 4, dtype="int64"), desc="ints -> float32"),
        S(make(3), make(3), call=lambda lib, a, b: lib.arctan2(a, b)),
        S(make(3), make(3), call=lambda lib, a, b: a.clone().atan2_(b)),
    ],
    "relu": [
        S(make(3, 4)), S(make()), S(K(-1.0, 0.0, 2.0), desc="relu'(0) = 0"),
        S(A(-3, 0, 4, dtype="int64")),
        S(make(3), call=lambda lib, a: a.relu()),
        S(K(-1.0, 0.0, 2.0), call=lambda lib, a: a.clone().relu_()),
    ],
    # -- rounding ----------------------------------------------------------------------------
    "floor": [S(make(3, 4, low=-5, high=5)), S(make()), S(A(-2, 3, dtype="int64")),
              S(A(-1.5, -0.5, 0.5, 1.5)), S(make(3), call=lambda lib, a: a.clone().floor_())],
    "ceil": [S(make(3, 4, low=-5, high=5)), S(make()), S(A(-2, 3, dtype="int64")),
             S(A(-1.5, -0.5, 0.5, 1.5)), S(make(3), call=lambda lib, a: a.clone().ceil_())],
    "trunc": [S(make(3, 4, low=-5, high=5)), S(make()), S(A(-2, 3, dtype="int64")),
              S(A(-1.5, -0.5, 0.5, 1.5)), S(make(3), call=lambda lib, a: a.clone().trunc_())],
    "frac": [S(make(3, 4, low=-5, high=5)), S(make()), S(A(-1.5, -0.5, 0.5, 1.5)),
             S(make(3), call=lambda lib, a: a.clone().frac_()),
             S(A(-2, 3, dtype="int64"), call=lambda lib, a: err(lambda: lib.frac(a)))],
    "round": [
        S(make(3, 4, low=-5, high=5)), S(make()),
        S(K(-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5), desc="half to even"),
        S(A(-2, 3, dtype="int64")),
        S(K(1.2345, -2.555, 0.125, 12345.678), decimals=2),
        S(K(1234.5, -2555.0, 150.0, 250.0), decimals=-2),
        S(A(1, 2, dtype="int64"),
          call=lambda lib, a: err(lambda: lib.round(a, decimals=1))),
        S(make(3), call=lambda lib, a: a.clone().round_()),
        S(make(3), call=lambda lib, a: a.clone().round_(decimals=1)),
    ],
    "sign": [S(make(3, 4)), S(K(-2.0, 0.0, 3.0, -0.0)), S(A(-2, 0, 3, dtype="int64")),
             S(A(True, False, dtype="bool")), S(make(3), call=lambda lib, a: a.clone().sign_())],
    # torch's gradient of sgn is a ZeroTensor, which cannot be read: "+ a" makes it readable
    "sgn": [S(make(3, 4), call=lambda lib, a: lib.sgn(a) + a),
            S(K(-2.0, 0.0, 3.0), call=lambda lib, a: a.sgn() + a),
            S(A(-2, 0, 3, dtype="int64")), S(A(True, False, dtype="bool")),
            S(make(3), call=lambda lib, a: a.clone().sgn_() + a)],
    # -- clamping and selection --------------------------------------------------------------
    "clamp": [
        S(make(3, 4), -0.5, 0.5),
        S(K(-1.0, 0.0, 0.5, 1.0, 2.0), 0.0, 1.0, desc="gradient 1 at the bounds"),
        S(make(3, 4), min=-0.5),
        S(make(3, 4), max=0.5),
        S(make(3, 4), None, 0.5),
        S(make(), -0.5, 0.5, desc="0-d"),
        S(make(3, 4), 0.5, -0.5, desc="min > max gives max"),
        S(make(3, 4), make(3, 4), make(3, 4), desc="tensor bounds"),
        S(make(3, 4), make(4), desc="tensor min"),
        S(make(3, 4), max=make(4), desc="tensor max"),
        S(K(-1.0, 0.0, 0.5, 1.0, 2.0), K(0.0, 0.0, 0.0, 0.0, 0.0),
          K(1.0, 1.0, 1.0, 1.0, 1.0), desc="tensor bounds, ties"),
        S(make(3), make(2, 3), desc="bounds broadcast the result"),
        S(A(-5, 0, 5, dtype="int64"), -2, 2, desc="int"),
        S(A(-5, 0, 5, dtype="int64"), -2.5, 2.5, desc="int with float bounds"),
        S(A(-5, 0, 5, dtype="int32"), Z(-2, "int64"), Z(2, "int64")),
        S(A(1.0, _NAN, 3.0), 0.0, 2.0, grad=False, desc="nan stays nan"),
        S(make(3), Z(0.1, "float64"), desc="float64 0-d bound"),
        S(make(3), -0.5, 0.5, call=lambda lib, a, lo, hi: lib.clip(a, lo, hi)),
        S(make(3), -0.5, 0.5, call=lambda lib, a, lo, hi: a.clip(lo, hi)),
        S(make(3), -0.5, 0.5, call=lambda lib, a, lo, hi: a.clone().clamp_(lo, hi)),
        S(make(3), -0.5, 0.5, call=lambda lib, a, lo, hi: a.clone().clip_(lo, hi)),
        S(make(3), call=lambda lib, a: err(lambda: lib.clamp(a))),
    ],
    "clamp_min": [
        S(make(3, 4), 0.0), S(K(-1.0, 0.0, 1.0), 0.0, desc="tie"),
        S(make(3, 4), make(4)), S(K(-1.0, 0.0, 1.0), K(0.0, 0.0, 0.0), desc="tensor tie"),
        S(A(-3, 3, dtype="int64"), 1), S(make(3), call=lambda lib, a: a.clone().clamp_min_(0.1)),
    ],
    "clamp_max": [
        S(make(3, 4), 0.0), S(K(-1.0, 0.0, 1.0), 0.0, desc="tie"),
        S(make(3, 4), make(4)), S(K(-1.0, 0.0, 1.0), K(0.0, 0.0, 0.0), desc="tensor tie"),
        S(A(-3, 3, dtype="int64"), 1), S(make(3), call=lambda lib, a: a.clone().clamp_max_(0.1)),
    ],
    "maximum": [
        S(make(3, 4), make(3, 4)), S(make(3, 4), make(4)), S(make(), make(3)),
        S(A(1.0, 2.0, 3.0), A(1.0, 1.0, 4.0), desc="ties split 0.5/0.5"),
        S(A(1, 5, dtype="int64"), A(3, 2, dtype="int32")),
        S(A(1.0, _NAN), A(_NAN, 2.0), grad=False, desc="nan propagates"),
        S(make(3), make(3), call=lambda lib, a, b: a.maximum(b)),
    ],
    "minimum": [
        S(make(3, 4), make(3, 4)), S(make(3, 4), make(4)), S(make(), make(3)),
        S(A(1.0, 2.0, 3.0), A(1.0, 1.0, 4.0), desc="ties split 0.5/0.5"),
        S(A(1, 5, dtype="int64"), A(3, 2, dtype="int32")),
        S(A(1.0, _NAN), A(_NAN, 2.0), grad=False, desc="nan propagates"),
        S(make(3), make(3), call=lambda lib, a, b: a.minimum(b)),
    ],
    "lerp": [
        S(make(3, 4), make(3, 4), 0.3), S(make(3, 4), make(3, 4), 0.8),
        S(make(3, 4), make(4), make(3, 4, low=0, high=1), desc="tensor weight"),
        S(make(), make(3), 0.5),
        S(make(3), make(3), Z(0.25, "float64")),
        S(make(3), make(3), call=lambda lib, a, b: a.lerp(b, 0.7)),
        S(make(3), make(3), call=lambda lib, a, b: a.clone().lerp_(b, 0.7)),
        S(make(3), make(3).astype("float64"),
          call=lambda lib, a, b: err(lambda: lib.lerp(a, b, 0.5)), grad=False,
          desc="lerp needs equal dtypes"),
        S(make(3), make(3), make(3).astype("float64"),
          call=lambda lib, a, b, w: err(lambda: lib.lerp(a, b, w)), grad=False),
        S(make(3), make(3), Z(0.3, "float16"), atol=1e-4, desc="0-d weight of another dtype"),
    ],
    "where": [
        S(make(3, 4, dtype="bool"), make(3, 4), make(3, 4)),
        S(make(3, 1, dtype="bool"), make(4), make(3, 4), desc="broadcast"),
        S(make(3, dtype="bool"), make(3), 0.0, desc="python scalar other"),
        S(make(3, dtype="bool"), 1.5, make(3), desc="python scalar input"),
        S(make(3, dtype="bool"), make(3, dtype="int64"), make(3), desc="int and float"),
        S(make(3, dtype="bool"), make(3, dtype="int32"), 2, desc="int32 and python int"),
        S(make(3, dtype="bool"), make(3), Z(1.0, "float64"), desc="float64 0-d"),
        S(np.array(True), make(3), make(3), desc="0-d condition"),
        S(make(3, dtype="bool"), make(3), make(3),
          call=lambda lib, c, a, b: a.where(c, b), desc="Tensor.where"),
        S(make(3, dtype="bool"), make(3), call=lambda lib, c, a: a.where(c, 0.0)),
        S(make(3), make(3), make(3), call=lambda lib, c, a, b: lib.where(c > 0, a, b)),
        S(make(3, 4, dtype="bool"), call=lambda lib, c: lib.where(c), desc="condition only"),
        S(A(0, 2, 0, 5, dtype="int64"), call=lambda lib, c: lib.where(c), desc="nonzero ints"),
        S(make(3, dtype="bool"), make(3), make(3),
          call=lambda lib, c, a, b: lib.where(c, a, b, out=lib.empty(3)), grad=False,
          desc="out="),
        S(make(3), make(3), make(3),
          call=lambda lib, c, a, b: err(lambda: lib.where(c, a, b)), grad=False,
          desc="float condition errors"),
    ],
    "isclose": [
        S(make(3, 4), make(3, 4)),
        S(A(1.0, 1.0 + 1e-6, 1.0 + 1e-3, _NAN, _INF), A(1.0, 1.0, 1.0, _NAN, _INF)),
        S(A(1.0, _NAN), A(1.0, _NAN), equal_nan=True),
        S(A(1.0, 1.1), A(1.0, 1.0), rtol=0.2),
        S(A(1.0, 1.1), A(1.0, 1.0), atol=0.2, rtol=0.0),
        S(A(1, 2, dtype="int64"), A(1, 3, dtype="int64")),
        S(make(3), make(3), call=lambda lib, a, b: a.isclose(b)),
        S(make(3), make(3), call=lambda lib, a, b: lib.allclose(a, b), desc="allclose"),
        S(make(3), call=lambda lib, a: lib.allclose(a, a + 1e-7), desc="allclose true"),
        S(make(3), call=lambda lib, a: a.allclose(a + 1e-2, atol=0.1), desc="allclose kw"),
        S(make(3), make(3), call=lambda lib, a, b: lib.equal(a, b), desc="equal"),
        S(make(3), call=lambda lib, a: lib.equal(a, a.clone()), desc="equal true"),
        S(make(3), make(2, 3), call=lambda lib, a, b: lib.equal(a, b), desc="equal shapes"),
        S(make(3), call=lambda lib, a: a.equal(a), desc="Tensor.equal"),
    ],
})


def _comparisons():
    ops = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
    aliases = {"ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
               "ge": "greater_equal"}
    for name, sym in ops.items():
        binop = eval(f"lambda lib, a, b: a {sym} b")  # noqa: S307
        rop = eval(f"lambda lib, a: 0.5 {sym} a")  # noqa: S307
        s = [
            S(make(3, 4), make(3, 4)),
            S(A(1.0, 2.0, 3.0), A(1.0, 3.0, 2.0), desc="ties"),
            S(make(3, 4), make(4), desc="broadcast"),
            S(make(), make(3)),
            S(make(3, 4), 0.0),
            S(A(1, 2, 3, dtype="int64"), 2),
            S(A(1, 2, 3, dtype="int64"), 2.5),
            S(A(1, 2, 3, dtype="int64"), A(1.0, 2.5, 2.0)),
            S(A(True, False, dtype="bool"), A(True, True, dtype="bool")),
            S(A(1.0, _NAN), A(_NAN, _NAN), desc="nan"),
            S(A(255, 0, dtype="uint8"), -1, desc="uint8 vs negative python int"),
            S(make(3), make(3), call=binop, desc=sym),
            S(make(3), call=rop, desc=f"0.5 {sym} a"),
            S(make(3), make(3), call=_method(name)),
            S(make(3), make(3), call=lambda lib, a, b, n=name: getattr(a.clone(), n + "_")(b),
              desc="in-place keeps float"),
        ]
        if name in aliases:
            s.append(S(make(3), make(3),
                       call=lambda lib, a, b, n=aliases[name]: getattr(lib, n)(a, b)))
        SAMPLES[name] = s


_comparisons()


def _logic():
    for name in ("logical_and", "logical_or", "logical_xor"):
        SAMPLES[name] = [
            S(make(3, 4, dtype="bool"), make(3, 4, dtype="bool")),
            S(make(3, 4, dtype="bool"), make(4, dtype="bool")),
            S(A(0.0, 1.5, 0.0, -2.0), A(0.0, 0.0, 3.0, 1.0), desc="floats"),
            S(A(0, 1, 0, 2, dtype="int64"), A(0, 0, 3, 1, dtype="int64"), desc="ints"),
            S(A(0.0, 1.5), A(0, 1, dtype="int64"), desc="mixed"),
            S(make(3, dtype="bool"), make(3, dtype="bool"), call=_method(name)),
            S(A(0.0, 1.5, 0.0), A(0.0, 0.0, 3.0),
              call=lambda lib, a, b, n=name: getattr(a.clone(), n + "_")(b),
              desc="in-place keeps dtype"),
        ]
    SAMPLES["logical_not"] = [
        S(make(3, 4, dtype="bool")), S(A(0.0, 1.5, -2.0)), S(A(0, 3, dtype="int64")),
        S(np.array(False)),
        S(A(0.0, 1.5), call=lambda lib, a: a.clone().logical_not_()),
    ]
    for name, sym in (("bitwise_and", "&"), ("bitwise_or", "|"), ("bitwise_xor", "^")):
        SAMPLES[name] = [
            S(A(12, 10, -1, dtype="int64"), A(10, 6, 5, dtype="int64")),
            S(A(12, 10, dtype="uint8"), A(10, 255, dtype="uint8")),
            S(make(3, 4, dtype="bool"), make(4, dtype="bool")),
            S(A(12, 10, dtype="int32"), 6),
            S(A(12, 10, dtype="int64"), True),
            S(A(12, 10, dtype="int64"), A(10, 6, dtype="int64"),
              call=eval(f"lambda lib, a, b: a {sym} b")),  # noqa: S307
            S(A(12, 10, dtype="int64"), call=eval(f"lambda lib, a: 6 {sym} a")),  # noqa: S307
            S(A(12, 10, dtype="int64"), A(10, 6, dtype="int64"),
              call=lambda lib, a, b, n=name: getattr(a.clone(), n + "_")(b)),
            S(A(1.0), A(2.0), call=lambda lib, a, b, n=name: err(lambda: getattr(lib, n)(a, b)),
              desc="floats error"),
        ]
    SAMPLES["bitwise_not"] = [
        S(A(12, 0, -1, dtype="int64")), S(A(12, 0, 255, dtype="uint8")),
        S(make(3, dtype="bool")), S(make(3, dtype="bool"), call=lambda lib, a: ~a),
        S(A(3, 4, dtype="int64"), call=lambda lib, a: a.clone().bitwise_not_()),
        S(A(1.0), call=lambda lib, a: err(lambda: lib.bitwise_not(a))),
    ]
    special = A(1.0, _NAN, _INF, -_INF, 0.0, -1e38)
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal"):
        SAMPLES[name] = [
            S(special), S(special.astype("float64")), S(make(3, 4)), S(np.array(_NAN)),
            S(A(1, 2, dtype="int64")), S(A(True, dtype="bool")), S(special, call=_method(name)),
        ]


_logic()

for _s in SAMPLES["floor_divide"]:
    _s.grad = False
