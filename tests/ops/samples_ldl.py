"""Samples for the rows in _ops/ldl.py (torch.linalg.ldl_factor_ex, ldl_solve): symmetric
matrices whose Bunch-Kaufman steps take 1x1 and 2x2 pivots, with and without interchanges;
the upper triangle is never read; a singular matrix's info. PyTorch has no derivatives for
them: the results require grad and backward raises, in both libraries."""

import numpy as np

from .harness import S, err, own_make, raises

make = own_make(140)


def _sym(*shape, diag=1.0):
    a = make(*shape, dtype="float64")
    a = a + np.swapaxes(a, -1, -2)
    n = shape[-1]
    a[..., np.arange(n), np.arange(n)] *= diag
    return a


SMALL_DIAG = _sym(7, 7, diag=0.01)   # 2x2 pivots and interchanges
ZERO_DIAG = _sym(5, 5, diag=0.0)
UPPER_NOISE = np.tril(_sym(6, 6)) + np.triu(make(6, 6, dtype="float64"), 1)
SINGULAR = np.diag([1.0, 0.0, 0.0])


def _factor(lib, a):
    return tuple(lib.linalg.ldl_factor_ex(a))


def _solve(lib, a, b):
    LD, pivots = lib.linalg.ldl_factor(a)
    return lib.linalg.ldl_solve(LD, pivots, b)


def _backward_raises(f):
    def call(lib, *args):
        out = f(lib, *(a.requires_grad_() for a in args))
        out = out[0] if isinstance(out, tuple) else out
        return out.grad_fn.name(), err(lambda: out.sum().backward(), chars=200)
    return call


SAMPLES = {
    "linalg_ldl_factor_ex": [
        S(_sym(4, 4), grad=False, call=_factor),
        S(SMALL_DIAG, grad=False, call=_factor, desc="2x2 pivots"),
        S(ZERO_DIAG, grad=False, call=_factor, desc="zero diagonal"),
        S(UPPER_NOISE, grad=False, call=_factor, desc="upper triangle ignored"),
        S(_sym(3, 5, 5, diag=0.05).astype("float32"), grad=False, call=_factor, atol=1e-5,
          desc="batched float32"),
        S(SINGULAR, grad=False, call=_factor, desc="singular: info"),
        S(np.zeros((2, 0, 0)), grad=False, call=_factor, desc="empty"),
        S(SMALL_DIAG, grad=False, call=_backward_raises(_factor), desc="backward raises"),
        S(make(3, 4, dtype="float64"), grad=False, call=raises(_factor), desc="not square"),
        S(np.ones((2, 2), np.int64), grad=False, call=raises(_factor), desc="integer"),
        S(np.ones((2, 2), np.float16), grad=False, call=raises(_factor), desc="half"),
    ],
    "linalg_ldl_solve": [
        S(_sym(4, 4), make(4, 2, dtype="float64"), grad=False, call=_solve),
        S(SMALL_DIAG, make(7, 3, dtype="float64"), grad=False, call=_solve, atol=1e-9,
          desc="2x2 pivots"),
        S(ZERO_DIAG, make(5, 1, dtype="float64"), grad=False, call=_solve, atol=1e-9,
          desc="zero diagonal"),
        S(_sym(2, 5, 5, diag=0.05).astype("float32"), make(5, 2), grad=False, call=_solve,
          atol=1e-4, rtol=1e-4, desc="batched LD, broadcast b"),
        S(SMALL_DIAG, make(7, 2, dtype="float64"), grad=False,
          call=_backward_raises(_solve), desc="backward raises"),
        S(_sym(3, 3), make(4, 1, dtype="float64"), grad=False, call=raises(_solve),
          desc="rows of b"),
        S(_sym(3, 3), make(3, 1), grad=False, call=raises(_solve), desc="dtypes differ"),
        S(_sym(3, 3), make(3, dtype="float64"), grad=False, call=raises(_solve),
          desc="1-d b"),
    ],
}
