"""Samples for the rows of _ops/misc.py: frexp and renorm."""

from .harness import A, K, S, err, make
from .harness import inplace as _inplace

SAMPLES = {
    "frexp": [
        S(make(3, 4)),
        # exact powers of two sit on the mantissa's jumps: compared with PyTorch only (K)
        S(K(8.0, 0.3, -5.0, 0.0, 1.0, -0.75)),
        S(make(2, 3, dtype="float64"), desc="float64"),
        S(make(3), call=lambda lib, x: x.frexp(), desc="method"),
        S(A(1, 2, dtype="int64"), call=lambda lib, x: err(lambda: lib.frexp(x)),
          desc="integers are refused"),
    ],
    "renorm": [
        S(make(3, 4), 2, 0, 1.0),
        S(make(3, 4), 1, 1, 2.0),
        S(make(2, 3, 2), 3, 2, 0.5, desc="3-d"),
        S(make(3, 3, low=1, high=3), float("inf"), 0, 1.5, desc="inf norm"),
        S(make(3, 4), 2, -1, 100.0, desc="nothing scaled"),
        S(make(3, 4), 2, 0, 1.0, call=_inplace("renorm"), desc="in place"),
        S(make(3), 2, 0, 1.0, call=lambda lib, x, *a: err(lambda: lib.renorm(x, *a)),
          desc="1-d is refused"),
        S(make(3, 2), 2, 0, -1.0, call=lambda lib, x, *a: err(lambda: lib.renorm(x, *a)),
          desc="negative maxnorm"),
    ],
}
