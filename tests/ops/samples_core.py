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
    "clone": [S(make(3, 4)), S(make()), S(make(2, dtype="int64"))],
}
