"""Samples for the row in _ops/triangular_solve.py (the deprecated torch.triangular_solve)."""

import numpy as np

from .harness import S, method, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(104)


def tri(*shape, dtype="float32"):
    """Well-conditioned matrices (either triangle can be used)."""
    n = shape[-1]
    return (make(*shape, low=-1, high=1) + n * np.eye(n)).astype(dtype)


def _ts(lib, b, a, *args, **kwargs):
    return lib.triangular_solve(b, a, *args, **kwargs)


SAMPLES = {
    "triangular_solve": [
        S(make(3, 2), np.triu(tri(3, 3)), call=_ts),
        S(make(3, 2), np.tril(tri(3, 3)), False, call=_ts),
        S(make(3, 2), tri(3, 3), True, True, call=_ts),  # the other triangle is ignored
        S(make(3, 2), tri(3, 3), upper=False, unitriangular=True, call=_ts),
        S(make(5, 1, 3, 2), tri(4, 3, 3), call=_ts),  # batches broadcast, A's copy too
        S(make(3, 4), tri(2, 3, 3), False, True, True, call=_ts),
        S(make(3, 2), tri(3, 3), call=method("triangular_solve")),
        S(make(3), tri(3, 3), grad=False, call=raises(_ts)),
        S(make(3, 2), make(3), grad=False, call=raises(_ts)),
        S(make(4, 2), tri(3, 3), grad=False, call=raises(_ts)),
        S(make(3, 2, dtype="float64"), tri(3, 3), grad=False, call=raises(_ts)),
        S(make(3, 2), make(3, 2), grad=False, call=raises(_ts)),
        S(make(3, 2, dtype="int64"), make(3, 3, dtype="int64"), grad=False, call=raises(_ts)),
    ],
}
