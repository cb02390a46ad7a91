"""Samples for the rows in _ops/complex.py.

Complex inputs never require grad in the harness, so gradients are compared through chains
that start and end real (`angle(complex(a, b))`), where PyTorch's and JAX's conjugation
conventions agree.
"""

import numpy as np

from .harness import S, make


def C(*shape, dtype="complex64"):
    """A deterministic random complex array."""
    re, im = make(*shape, dtype="float64"), make(*shape, dtype="float64")
    return np.asarray(re + 1j * im).astype(dtype)


def _method(name):
    return lambda lib, x, *a, **k: getattr(x, name)(*a, **k)


def _inplace(name):
    return lambda lib, x, *a, **k: getattr(x.clone(), name + "_")(*a, **k)


def _of_complex(name, post=None):
    """name applied to complex(a, b), then post: gradients reach both real parts."""
    def f(lib, a, b, **k):
        out = getattr(lib, name)(lib.complex(a, b), **k)
        return post(lib, out) if post is not None else out
    return f


def _resolved(name, samples):
    """PyTorch's conj is a lazy conjugate, which the harness cannot read with numpy(): resolve it
    (a no-op in torchjax) at the end of every call."""
    for s in samples:
        f = s.call or (lambda lib, *a, **k: getattr(lib, name)(*a, **k))
        s.call = (lambda f: lambda lib, *a, **k: f(lib, *a, **k).resolve_conj())(f)
    return samples


def _common(name):
    """Complex inputs of several shapes and both precisions, plus real-to-real chains."""
    return [
        S(C(3, 4)),
        S(C(dtype="complex128"), desc="0-d complex128"),
        S(C(2, 0), desc="empty"),
        S(C(2, 3, 2, dtype="complex128")),
        S(make(3, 4), make(3, 4), call=_of_complex(name), desc="complex(a, b)"),
        S(make(5), make(5), call=_of_complex(name), desc="1-d"),
    ]


# angle at 0 (PyTorch's gradient 0 there) and on the negative real axis
# (65 elements: the table test skips finite differences, meaningless at these points, above 64)
_A0 = np.resize(np.array([0.0, 1.0, -1.5, 0.0, 2.0, -0.5], dtype="float32"), 65)
_B0 = np.resize(np.array([0.0, 0.0, 0.0, 1.0, -2.0, 0.3], dtype="float32"), 65)
# polar with a zero and negative magnitudes: PyTorch's abs gradient is sgn(abs) times the true
# one, so finite differences disagree with it there
_R0 = np.resize(np.array([0.0, 1.0, -1.5, 0.5, -0.2, 2.0], dtype="float32"), 65)

# PyTorch's conj sets a lazy bit; a materialised result shows CloneBackward0
GRAD_NAME_SKIP = {"conj": "lazy conjugation"}

SAMPLES: dict = {
    "real": _common("real") + [
        S(make(3, 4), desc="real input: itself"),
        S(make(4, dtype="int64", low=-3, high=3), desc="int64"),
        S(make(2, 3), make(3), call=_of_complex("real", lambda lib, o: o * o),
          desc="broadcast, squared"),
    ],
    "imag": _common("imag") + [
        S(make(2, 3), make(3), call=_of_complex("imag", lambda lib, o: o * o),
          desc="broadcast, squared"),
    ],
    "angle": _common("angle") + [
        S(make(3, 4), desc="real"),
        S(np.resize(np.array([1.0, -2.0, 0.0, -0.0, np.nan, -np.inf], dtype="float32"), 65),
          desc="real special values"),
        S(make(), desc="0-d real"),
        S(make(2, 5), call=_method("angle"), desc="method"),
        S(C(2, 5), call=_method("angle"), desc="complex method"),
        S(make(5, dtype="int64", low=-3, high=3), desc="int64 -> float32"),
        S(make(4) > 0, desc="bool"),
        S(_A0, _B0, call=_of_complex("angle"), desc="zero and negative real axis"),
    ],
    "conj": _resolved("conj", _common("conj") + [
        S(make(3, 4), desc="real input: itself"),
        S(make(4, dtype="int64", low=-3, high=3), desc="int64"),
        S(C(2, 3), call=_method("conj"), desc="method"),
        S(make(3), make(3), call=_of_complex("conj", lambda lib, o: o * lib.complex(
            lib.ones(3), lib.arange(3.0))), desc="times a complex constant"),
    ]),
    "conj_physical": _common("conj_physical") + [
        S(make(3, 4), desc="real input"),
        S(make(4, dtype="int64", low=-3, high=3), desc="int64"),
        S(C(2, 3), call=_method("conj_physical"), desc="method"),
        S(C(4, dtype="complex128"), call=_inplace("conj_physical"), desc="in-place"),
        S(make(4), call=_inplace("conj_physical"), desc="in-place on a real tensor"),
        S(make(3), make(3), call=_of_complex("conj_physical", lambda lib, o: o * lib.complex(
            lib.ones(3), lib.arange(3.0))), desc="times a complex constant"),
    ],
    "view_as_real": _common("view_as_real") + [
        S(make(2, 3), make(3), call=_of_complex("view_as_real", lambda lib, o: o * o),
          desc="broadcast, squared"),
    ],
    "view_as_complex": [
        S(make(3, 2)),
        S(make(2, 3, 2, dtype="float64"), desc="float64 -> complex128"),
        S(make(2), desc="1-d"),
        S(make(4, 2), call=lambda lib, x: lib.view_as_complex(x).abs(), desc="abs chain"),
        S(make(3, 2), call=lambda lib, x: lib.view_as_complex(x) ** 2, desc="squared"),
    ],
    "complex": [
        S(make(3, 4), make(3, 4)),
        S(make(2, 3, dtype="float64"), make(2, 3, dtype="float64"), desc="float64"),
        S(make(2, 1, 3), make(4, 1), desc="broadcast"),
        S(make(), make(), desc="0-d"),
        S(make(0, 3), make(3), desc="empty"),
        S(make(3), make(3), call=lambda lib, a, b: lib.complex(real=a, imag=b).abs(),
          desc="keywords, abs chain"),
    ],
    "polar": [
        S(np.abs(make(3, 4)), make(3, 4)),
        S(np.abs(make(2, 3, dtype="float64")), make(2, 3, dtype="float64"), desc="float64"),
        S(np.abs(make(2, 1, 3)), make(4, 1), desc="broadcast"),
        S(np.array(abs(make()), dtype="float32"), make(), desc="0-d"),
        S(_R0, make(65), desc="zero and negative magnitudes"),
        S(np.abs(make(3)), make(3), call=lambda lib, a, b: lib.polar(abs=a, angle=b).abs(),
          desc="keywords, abs chain"),
        S(np.abs(make(3)), make(3), call=lambda lib, a, b: lib.polar(a, b) * lib.complex(a, b),
          desc="times a complex tensor"),
    ],
}
