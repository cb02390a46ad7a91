"""Samples for the row in _ops/deprecated_norms.py (torch.frobenius_norm; nuclear_norm, a
composite, is in tests/test_torch_small_functions.py)."""

from .harness import S, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(113)

SAMPLES = {
    "frobenius_norm": [
        S(make(2, 3, 4), [1, 2]),
        S(make(2, 3, 4), [0, 2], True),
        S(make(3, 4), 1),
        S(make(3, 4, dtype="float64"), [0]),
        S(make(2, 3, 4), [0, 1, 2], grad=False,
          call=raises(lambda lib, x, d: lib.frobenius_norm(x, d))),
        S(make(3, 4, dtype="int64"), [0], grad=False,
          call=raises(lambda lib, x, d: lib.frobenius_norm(x, d))),
    ],
}


def _ned(lib, v, *a):
    return lib.norm_except_dim(v, *a)


SAMPLES["_norm_all"] = [
    S(make(4, 3, 2), 2, -1, call=_ned),
    S(make(4, 3), 3, -1, call=_ned),
]
