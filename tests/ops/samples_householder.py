"""Samples for the rows in _ops/householder.py (torch.geqrf, linalg.householder_product,
orgqr, ormqr). The products are checked with arbitrary Householder vectors and scalars, so
their gradients in all inputs are compared (and checked by finite differences)."""

import numpy as np

from .harness import S, err, method, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(109)

A = make(5, 3)
TAU = make(3)


def _geqrf_backward(lib, a):
    a.requires_grad_()
    qr, tau = lib.geqrf(a)
    return qr.grad_fn.name(), err(lambda: qr.sum().backward(), chars=60)


SAMPLES = {
    "geqrf": [
        S(A, grad=False),
        S(make(3, 5), grad=False, desc="wide"),
        S(make(2, 4, 4, dtype="float64"), grad=False),
        S(A, grad=False, call=method("geqrf")),
        S(A, grad=False, call=_geqrf_backward),
        S(make(3), grad=False, call=raises(lambda lib, a: lib.geqrf(a))),
        S(make(3, 3, dtype="int64"), grad=False, call=raises(lambda lib, a: lib.geqrf(a))),
    ],
    "linalg_householder_product": [
        S(A, TAU),
        S(A, make(2)),
        S(make(2, 4, 3), make(2, 3), desc="batched"),
        S(A, TAU, grad=False,
          call=lambda lib, a, t: lib.linalg.householder_product(*lib.geqrf(a))),
        S(make(3, 4), TAU, grad=False,
          call=raises(lambda lib, a, t: lib.linalg.householder_product(a, t))),
        S(A, make(4), grad=False,
          call=raises(lambda lib, a, t: lib.linalg.householder_product(a, t))),
        S(A, TAU.astype(np.float64), grad=False,
          call=raises(lambda lib, a, t: lib.linalg.householder_product(a, t))),
    ],
    "orgqr": [
        S(A, TAU),
        S(A, TAU, call=method("orgqr")),
    ],
    "ormqr": [
        S(A, TAU, make(5, 2)),
        S(A, TAU, make(5, 2), transpose=True),
        S(A, TAU, make(2, 5), left=False),
        S(A, TAU, make(2, 5), False, True),
        S(A, TAU, make(5, 2), call=method("ormqr")),
        S(A, TAU, make(3, 2), grad=False,
          call=raises(lambda lib, a, t, c: lib.ormqr(a, t, c))),
    ],
}
