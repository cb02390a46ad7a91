"""Samples for the rows in _ops/cholesky_solve.py (torch.cholesky_solve, cholesky_inverse).

The forward reads only the factor's triangle while PyTorch's gradient covers the whole factor,
so the samples that finite differences check pass a factor masked to its triangle (then both
see the same function); the raw factor's full gradient is compared with PyTorch's alone."""

import numpy as np

from .harness import S, method, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(101)


def factor(*shape, dtype="float32"):
    """A well-conditioned factor: random, with a diagonal away from zero."""
    n = shape[-1]
    return (make(*shape, low=-1, high=1) + 2 * np.eye(n)).astype(dtype)


def _solve_tri(lib, b, u, upper=False):
    return lib.cholesky_solve(b, u.triu() if upper else u.tril(), upper)


def _inverse_tri(lib, u, upper=False):
    return lib.cholesky_inverse(u.triu() if upper else u.tril(), upper)


SAMPLES = {
    "cholesky_solve": [
        S(make(3, 2), factor(3, 3), call=_solve_tri),
        S(make(3, 2), factor(3, 3), True, call=_solve_tri),
        S(make(2, 3, 1), factor(3, 3), call=_solve_tri),  # batch from b
        S(make(3, 4), factor(2, 3, 3), upper=True, call=_solve_tri),  # batch from A
        # the full factor: PyTorch's gradient reaches the other triangle too
        S(make(5, 1, 3, 2), factor(4, 3, 3), grad=True),
        S(make(3, 2), factor(3, 3), upper=True),
        S(make(3, 2), factor(3, 3), call=method("cholesky_solve")),
        S(make(0, 3, 2), factor(3, 3)),
        S(make(4, 2), factor(3, 3), grad=False,
          call=raises(lambda lib, b, u: lib.cholesky_solve(b, u))),
        S(make(3), factor(3, 3), grad=False,
          call=raises(lambda lib, b, u: lib.cholesky_solve(b, u))),
        S(make(3, 2), make(3, 2), grad=False,
          call=raises(lambda lib, b, u: lib.cholesky_solve(b, u))),
        S(make(3, 2), factor(3, 3, dtype="float64"), grad=False,
          call=raises(lambda lib, b, u: lib.cholesky_solve(b, u))),
        S(make(3, 2, dtype="int64"), make(3, 3, dtype="int64"), grad=False,
          call=raises(lambda lib, b, u: lib.cholesky_solve(b, u))),
    ],
    "cholesky_inverse": [
        S(factor(3, 3), call=_inverse_tri),
        S(factor(3, 3), True, call=_inverse_tri),
        S(factor(2, 4, 4), call=_inverse_tri),
        S(factor(3, 3)),  # the full factor
        S(factor(2, 3, 3), upper=True),
        S(factor(3, 3), call=method("cholesky_inverse")),
        S(factor(1, 1)),
        S(make(3, 2), grad=False, call=raises(lambda lib, u: lib.cholesky_inverse(u))),
        S(make(3), grad=False, call=raises(lambda lib, u: lib.cholesky_inverse(u))),
        S(make(3, 3, dtype="int64"), grad=False,
          call=raises(lambda lib, u: lib.cholesky_inverse(u))),
    ],
}
