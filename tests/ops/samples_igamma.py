"""Samples for the rows in _ops/igamma.py (torch.igamma, igammac; torch.special.gammainc,
gammaincc). PyTorch differentiates them in `other` only: the `input` samples check the
error backward raises."""

import numpy as np

from .harness import Const, S, err, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(107)

A = np.array([0.5, 1.0, 2.0, 3.5, 7.0], np.float32)
X = np.array([0.3, 1.0, 2.5, 0.7, 9.0], np.float32)


def _input_grad_error(name):
    def call(lib, a, x):
        out = getattr(lib, name)(a.detach().requires_grad_(), x.detach())
        return err(lambda: out.sum().backward(), chars=60)
    return call


SAMPLES = {
    "igamma": [
        # Const: `input` takes no gradient (PyTorch has none for it)
        S(Const(A), X),
        S(Const(make(3, 4, low=0.2, high=4)), make(4, low=0.1, high=5)),
        S(Const(A), X, call=lambda lib, a, x: lib.special.gammainc(a, x)),
        S(Const(A), X, call=lambda lib, a, x: a.igamma(x)),
        S(A, X, grad=False, call=lambda lib, a, x: a.clone().igamma_(x)),
        S(A, X, grad=False, call=_input_grad_error("igamma")),
        S(A.astype("int64"), X.astype("int64"), grad=False,
          call=raises(lambda lib, a, x: lib.igamma(a, x))),
    ],
    "igammac": [
        S(Const(A), X),
        S(Const(make(2, 3, low=0.2, high=4, dtype="float64")),
          make(2, 3, low=0.1, high=5, dtype="float64")),
        S(Const(A), X, call=lambda lib, a, x: lib.special.gammaincc(a, x)),
        S(A, X, grad=False, call=lambda lib, a, x: a.clone().igammac_(x)),
        S(A, X, grad=False, call=_input_grad_error("igammac")),
    ],
}
