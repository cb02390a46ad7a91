"""Samples for softmax / log_softmax and the activations of nn.functional (glu, prelu, rrelu
and the elementwise ones), called as torch.nn.functional.<name> in both libraries."""

import numpy as np

import torchjax

from .harness import S, make, raises
from .samples_pointwise import A, K, err


def F(name):
    """call= for lib.nn.functional.<name>."""
    return lambda lib, *args, **kwargs: getattr(lib.nn.functional, name)(*args, **kwargs)


def _rrelu_train(lib, x, lower=0.125, upper=1 / 3):
    """Training slopes are random: the results for x > 0 and whether each slope out / x of
    x < 0 lies in [lower, upper]."""
    out = lib.nn.functional.rrelu(x, lower, upper, training=True)
    slope = out.detach() / x.detach()
    return out * (x > 0), (x > 0) | ((slope >= lower) & (slope <= upper))


def _softmax(name):
    return [
        S(make(3, 4), 1),
        S(make(2, 3, 4), -2, desc="negative dim"),
        S(make(), -1, desc="0-d"),
        S(make(0, 3), 1, desc="empty"),
        S(make(2, 3, dtype="int64", low=-5, high=5), 1, dtype=torchjax.float32,
          desc="int input with dtype"),
        S(np.array([[1000.0, 0.0, -1000.0, 999.0], [80.0, 100.0, -100.0, 3e4]],
                   dtype="float32"), 1, desc="huge logits"),
        S(make(3).astype("float16"), 0, atol=1e-3, rtol=1e-3, desc="float16"),
        S(K(-_INF, 0.0, 1.0), 0, desc="-inf logit"),
        S(make(3, 4), call=lambda lib, x: getattr(x, name)(dim=0, dtype=lib.float64),
          desc="method"),
        S(make(3, 4), call=lambda lib, x: getattr(lib.nn.functional, name)(x, dim=1),
          desc="F form"),
        S(make(2, 3), call=lambda lib, x: err(lambda: getattr(lib, name)(x, 2)), grad=False,
          desc="dim out of range"),
        S(A(1, 2, dtype="int64"), call=lambda lib, x: err(lambda: getattr(lib, name)(x, 0)),
          desc="int input errors"),
    ]


_INF = float("inf")
_KINK = K(-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 0.1, -0.1)

SAMPLES = {
    "softmax": _softmax("softmax"),
    "log_softmax": _softmax("log_softmax"),
    "gelu": [
        S(make(3, 4, low=-4, high=4), call=F("gelu")),
        S(make(3, 4, low=-4, high=4), approximate="tanh", call=F("gelu")),
        S(_KINK, call=F("gelu")),
        S(make(3).astype("float16"), call=F("gelu"), atol=2e-3, rtol=2e-3),
        S(make(3), call=lambda lib, x: err(lambda: F("gelu")(lib, x, approximate="x"))),
        S(A(1, 2, dtype="int64"), call=lambda lib, x: err(lambda: F("gelu")(lib, x))),
    ],
    "silu": [S(make(3, 4, low=-6, high=6), call=F("silu")), S(_KINK, call=F("silu"))],
    "leaky_relu": [
        S(make(3, 4), 0.2, call=F("leaky_relu")),
        S(make(3, 4), negative_slope=-0.5, call=F("leaky_relu")),
        S(_KINK, negative_slope=0.3, call=F("leaky_relu"),
          desc="gradient at 0 is negative_slope"),
        S(A(1, -2, dtype="int64"), call=lambda lib, x: err(lambda: F("leaky_relu")(lib, x))),
    ],
    "elu": [S(make(3, 4), alpha=0.5, call=F("elu")), S(_KINK, 2.0, call=F("elu")),
            S(A(1, -2, dtype="int64"), call=lambda lib, x: err(lambda: F("elu")(lib, x)))],
    "selu": [S(make(3, 4)), S(_KINK), S(make(3), call=F("selu"))],
    "celu": [S(make(3, 4)), S(_KINK, 2.0), S(make(3), alpha=0.5, call=F("celu"))],
    "hardtanh": [
        S(make(3, 4), call=F("hardtanh")),
        S(_KINK, call=F("hardtanh"), desc="gradient 0 at the bounds"),
        S(_KINK, min_val=0.0, max_val=0.5, call=F("hardtanh")),
        S(A(-5, 0, 5, dtype="int64"), call=F("hardtanh"), desc="int stays int"),
    ],
    "relu6": [S(make(3, 4, low=-3, high=9), call=F("relu6")),
              S(_KINK, call=F("relu6"), desc="gradient 0 at 0 and 6"),
              S(A(-5, 0, 9, dtype="int64"), call=F("relu6"), desc="int stays int")],
    "softplus": [
        S(make(3, 4, low=-5, high=5), call=F("softplus")),
        S(make(3, 4), 0.5, 1.0, call=F("softplus")),
        S(K(-100.0, -30.0, 19.9, 20.0, 20.1, 50.0, 1e4), call=F("softplus"),
          desc="threshold and large inputs"),
        S(K(0.9, 1.0, 1.1), beta=2.0, threshold=2.0, call=F("softplus")),
    ],
    "logsigmoid": [S(make(3, 4, low=-5, high=5), call=F("logsigmoid")),
                   S(A(-200.0, -30.0, 0.0, 30.0, 200.0), call=F("logsigmoid"))],
    "mish": [S(make(3, 4, low=-5, high=5), call=F("mish")), S(_KINK, call=F("mish")),
             S(A(-200.0, -30.0, 30.0, 200.0), call=F("mish"))],
    "hardsigmoid": [S(make(3, 4, low=-5, high=5), call=F("hardsigmoid")),
                    S(_KINK, call=F("hardsigmoid"), desc="gradient 0 at -3 and 3")],
    "hardswish": [S(make(3, 4, low=-5, high=5), call=F("hardswish")),
                  S(_KINK, call=F("hardswish"), desc="-0.5 at -3, 1.5 at 3")],
    "softsign": [S(make(3, 4), call=F("softsign")), S(_KINK, call=F("softsign")),
                 S(A(1, -7, dtype="int64"), call=F("softsign"), desc="int -> float32")],
    "tanhshrink": [S(make(3, 4), call=F("tanhshrink")), S(make(), call=F("tanhshrink")),
                   S(A(1, -7, dtype="int64"), call=F("tanhshrink"), desc="int -> float32")],
    "softshrink": [
        S(make(3, 4), call=F("softshrink")),
        S(_KINK, 1.0, call=F("softshrink"), desc="gradient 0 at the ends"),
        S(make(), lambd=0.1, call=F("softshrink")),
        S(make(3), call=lambda lib, x: err(lambda: F("softshrink")(lib, x, -1.0))),
    ],
    "hardshrink": [
        S(make(3, 4)), S(_KINK, 1.0), S(make(), lambd=0.1, call=F("hardshrink")),
        S(make(3, 4), call=lambda lib, x: x.hardshrink(0.3), desc="method"),
    ],
    "threshold": [
        S(make(3, 4), 0.1, 20.0), S(_KINK, 0.5, -1.0, desc="gradient 0 at the threshold"),
        S(A(-5, 0, 5, dtype="int64"), 1, 7, desc="int"),
        S(make(3), call=lambda lib, x: F("threshold")(lib, x, threshold=0.2, value=-3.0)),
    ],
    "glu": [
        S(make(3, 4), call=F("glu")),
        S(make(2, 6, 2), 1, call=F("glu")),
        S(make(2, 3), call=raises(F("glu")), desc="odd size"),
        S(make(), call=raises(F("glu")), desc="0-d"),
        S(A(1, 2, dtype="int64"), call=raises(F("glu"))),
    ],
    "prelu": [
        S(make(2, 3, 4), make(3), call=F("prelu")),
        S(make(2, 3), make(1), call=F("prelu"), desc="one weight"),
        S(K(-1.0, 0.0, 1.0), make(1), call=F("prelu"), desc="slope weight at 0"),
        S(make(2, 3, 2, 2), make(3), call=lambda lib, x, w: x.prelu(w), desc="method"),
        S(make(2, 3), make(2), call=raises(F("prelu"))),
        S(make(2, 3), make(1, 3), call=raises(F("prelu"))),
        S(make(), make(3), call=raises(F("prelu"))),
        S(make(2, 3), make(3).astype("float64"), call=raises(F("prelu")), grad=False,
          desc="no promotion (not for the float64 finite differences)"),
        S(A(1, 2, dtype="int64"), A(1, dtype="int64"), call=raises(F("prelu"))),
    ],
    "rrelu_with_noise": [
        S(make(3, 4), call=F("rrelu"), desc="evaluation: slope (lower + upper) / 2"),
        S(_KINK, 0.1, 0.3, call=F("rrelu")),
        S(make(3, 4), call=_rrelu_train, desc="training"),
        S(make(3, 4), call=lambda lib, x: _rrelu_train(lib, x, 0.2, 0.2)),
        S(make(3, 4), 0.5, 0.1, call=raises(F("rrelu"))),
        S(A(1, -2, dtype="int64"), call=raises(F("rrelu"))),
        S(A(1, -2, dtype="int64"), call=raises(lambda lib, x: lib.nn.functional.rrelu(
            x, training=True))),
    ],
}
