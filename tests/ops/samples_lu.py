"""Samples for the rows in _ops/lu.py: torch.linalg.lu_factor(_ex), lu, lu_solve and the
deprecated torch.lu, lu_solve, lu_unpack (through the public functions)."""

import numpy as np

from .harness import S, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(108)


def sq(*shape):
    n = shape[-1]
    return (make(*shape, low=-1, high=1) + n * np.eye(n)).astype("float32")


# a matrix whose partial pivoting swaps rows
SWAP = np.array([[0.5, 2.0, 1.0], [3.0, 1.0, -1.0], [1.0, -2.0, 4.0]], np.float32)


def _factor(lib, a, **kw):
    return lib.linalg.lu_factor(a, **kw)


def _solve(lib, a, b, **kw):
    return lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, **kw)


def _lu_LU(lib, a):
    """linalg.lu's L and U (P carries no gradient: finite differences take the outputs that
    require grad)."""
    return lib.linalg.lu(a)[1:]


def _unpack_LU(lib, a, **kw):
    return lib.lu_unpack(*lib.linalg.lu_factor(a), **kw)[1:]


SAMPLES = {
    "linalg_lu_factor_ex": [
        S(SWAP, call=_factor),
        S(sq(2, 3, 3), call=_factor),
        S(make(4, 3), call=_factor),  # tall
        S(make(3, 5), call=_factor),  # wide
        S(SWAP, call=lambda lib, a: lib.linalg.lu_factor_ex(a)),
        S(SWAP, call=lambda lib, a: lib.lu(a)),
        S(sq(2, 3, 3), call=lambda lib, a: a.lu(get_infos=True)),
        S(np.zeros((3, 3), np.float32), grad=False,
          call=lambda lib, a: lib.linalg.lu_factor_ex(a)),  # info 1
        S(np.zeros((3, 3), np.float32), grad=False, call=raises(_factor)),
        S(np.zeros((2, 3, 3), np.float32), grad=False,
          call=raises(lambda lib, a: lib.linalg.lu_factor_ex(a, check_errors=True))),
        S(SWAP, grad=False, call=raises(lambda lib, a: lib.linalg.lu_factor(a, pivot=False))),
        S(make(3), grad=False, call=raises(_factor)),
        S(make(3, 3, dtype="int64"), grad=False, call=raises(_factor)),
    ],
    "linalg_lu": [
        S(SWAP, call=_lu_LU),
        S(sq(2, 3, 3), call=_lu_LU),
        S(make(4, 3), call=_lu_LU),
        S(make(3, 5), call=_lu_LU),
        S(SWAP, grad=False, call=lambda lib, a: lib.linalg.lu(a)),  # with P
        S(make(4, 3), grad=False, call=lambda lib, a: lib.linalg.lu(a)),
    ],
    "linalg_lu_solve": [
        S(SWAP, make(3, 2), call=_solve),
        S(SWAP, make(3, 2), call=lambda lib, a, b: _solve(lib, a, b, adjoint=True)),
        S(SWAP, make(2, 3), call=lambda lib, a, b: _solve(lib, a, b, left=False)),
        S(SWAP, make(2, 3), call=lambda lib, a, b: _solve(lib, a, b, left=False,
                                                          adjoint=True)),
        S(sq(2, 3, 3), make(3, 4), call=_solve),  # batch from A
        S(SWAP, make(2, 3, 1), call=_solve),  # batch from B
        S(SWAP, make(3, 2), call=lambda lib, a, b: lib.lu_solve(b, *lib.linalg.lu_factor(a))),
        S(SWAP, make(3, 2), call=lambda lib, a, b: b.lu_solve(*lib.linalg.lu_factor(a))),
        S(SWAP, make(4, 2), grad=False, call=raises(_solve)),
        S(SWAP, make(2, 4), grad=False,
          call=raises(lambda lib, a, b: _solve(lib, a, b, left=False))),
    ],
    "_lu_unpack": [
        S(SWAP, call=_unpack_LU),
        S(make(2, 4, 3), call=_unpack_LU),
        S(make(3, 5), call=_unpack_LU),
        S(make(2, 4, 3), grad=False, call=lambda lib, a: lib.lu_unpack(*lib.linalg.lu_factor(a))),
        # PyTorch cannot differentiate an unpack without the data (its backward fails)
        S(SWAP, grad=False,
          call=lambda lib, a: lib.lu_unpack(*lib.linalg.lu_factor(a), unpack_data=False)),
        S(SWAP, call=lambda lib, a: _unpack_LU(lib, a, unpack_pivots=False)),
    ],
}
