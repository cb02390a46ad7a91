"""Samples for the internal rows (dtype and device moves, clone)."""

import torchjax

from .harness import S, make

SAMPLES = {
    "_to_dtype": [
        S(make(3, 4), torchjax.float64, call=lambda lib, x, d: x.to(d)),
        S(make(3, 4), torchjax.float16, call=lambda lib, x, d: x.to(d), atol=1e-3),
        S(make(5, low=-9, high=9), torchjax.int32, grad=False, call=lambda lib, x, d: x.to(d)),
        S(make(2, 3, dtype="int64"), torchjax.float32, call=lambda lib, x, d: x.to(d)),
    ],
    "_to_device": [S(make(3), call=lambda lib, x: x.to("cpu", copy=True))],
    "_view_dtype": [  # Tensor.view(dtype): no autograd, as in PyTorch
        S(make(3, 4), torchjax.int32, grad=False, call=lambda lib, x, d: x.view(d)),
        S(make(3, 4), torchjax.uint8, grad=False, call=lambda lib, x, d: x.view(d)),
        S(make(2, 4, dtype="int32"), torchjax.int64, grad=False,
          call=lambda lib, x, d: x.view(d)),
    ],
    "clone": [S(make(3, 4)), S(make()), S(make(2, dtype="int64"))],
    "fill": [
        S(make(3, 4), 2.5, call=lambda lib, x, v: (x * 1).fill_(v)),
        S(make(3), make(), call=lambda lib, x, v: (x * 1).fill_(v)),
        S(make(2, 2, dtype="int64"), 7, call=lambda lib, x, v: x.clone().fill_(v)),
        S(make(4), 1.5, call=lambda lib, x, v: lib.fill(x, v)),
    ],
    "_copy_from": [
        S(make(3, 4), make(3, 4), call=lambda lib, x, y: (x * 1).copy_(y)),
        S(make(3, 4), make(4), call=lambda lib, x, y: (x * 1).copy_(y)),
        S(make(3, dtype="int64"), make(3), call=lambda lib, x, y: x.clone().copy_(y)),
        S(make(2, 2), make(2, 2, dtype="float64"), call=lambda lib, x, y: (x * 1).copy_(y)),
    ],
    "zero": [
        S(make(3, 4), call=lambda lib, x: (x * 1).zero_()),
        S(make(2, dtype="int32"), call=lambda lib, x: x.clone().zero_()),
    ],
}
