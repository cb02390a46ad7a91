"""Samples for the row in _ops/hash_tensor.py (torch.hash_tensor)."""

import numpy as np

from .harness import S, method, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(116)

_M = np.array([[1, 2], [3, 4]], np.int64)

SAMPLES = {
    "hash_tensor": [
        S(make(3, 4)),
        S(make(3, 4, dtype="float64"), 1),
        S(_M, 1),
        S(_M, [0, 1]),
        S(_M, 1, keepdim=True),
        S(np.array([True, False, True])),
        S(np.array([1.5], np.float16)),
        S(np.array([-1], np.int8)),
        S(np.array([200], np.uint8)),
        S(np.zeros((0, 3), np.float32), 1),
        S(make(3, 4), call=method("hash_tensor")),
        S(make(2), grad=False, call=raises(lambda lib, x: lib.hash_tensor(x, mode=1))),
        S(np.zeros((0, 3), np.float32), grad=False,
          call=raises(lambda lib, x: lib.hash_tensor(x))),
        S(np.zeros((0, 3), np.float32), grad=False,
          call=raises(lambda lib, x: lib.hash_tensor(x, 0))),
    ],
}
