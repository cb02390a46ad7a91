"""Samples for the row in _ops/nonzero_static.py."""

import numpy as np

from .harness import S, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(106)

M = np.array([[0, 1], [1, 0]], np.int64)

SAMPLES = {
    "nonzero_static": [
        S(M, size=4),  # padded with -1
        S(M, size=1, fill_value=-5),  # truncated
        S(M, size=0),
        S(make(3, 4) > 0, size=12),
        S(np.array([0.0, 2.5, 0.0, -1.0], np.float32), size=3, fill_value=7),
        S(np.array(3.0, np.float32), size=2),
        S(M, call=lambda lib, x: x.nonzero_static(size=3)),
        S(M, grad=False, call=raises(lambda lib, x: lib.nonzero_static(x, size=-1))),
    ],
}
