"""Samples for the row in _ops/segment_reduce.py (torch.segment_reduce)."""

import numpy as np

from .harness import Const, S, raises

D = np.array([1.0, 2, 3, 4, 5, 6], np.float32)
L = np.array([2, 0, 3, 1])
TIES = np.array([3.0, 3, 1, 2, 2, 0.5], np.float32)
ZEROS = np.array([0.0, 2, 3, 0, 0, 6], np.float32)


def _sr(reduce, **kw):
    def call(lib, data, lengths):
        out = lib.segment_reduce(data, reduce, lengths=lengths, **kw)
        # empty segments give inf / nan; the harness compares finite values
        return out.nan_to_num(posinf=0.0, neginf=0.0)
    return call


SAMPLES = {
    "_segment_reduce": [
        *[S(D, Const(L), call=_sr(r)) for r in ("sum", "mean", "max", "min", "prod")],
        *[S(D, Const(L), call=_sr(r, initial=10.0)) for r in ("sum", "mean", "amax", "amin",
                                                              "prod")],
        S(TIES, Const(np.array([3, 3])), call=_sr("max"), desc="ties share the gradient"),
        S(ZEROS, Const(np.array([2, 3, 1])), call=_sr("prod"), desc="zeros"),
        S(np.arange(12.0, dtype=np.float32).reshape(2, 6), Const(np.array([[2, 4], [3, 3]])),
          call=_sr("sum", axis=1), desc="batched lengths"),
        S(np.arange(12.0, dtype=np.float32).reshape(6, 2), Const(L), call=_sr("mean"),
          desc="trailing dims"),
        S(D, Const(np.array([0, 2, 2, 5, 6])),
          call=lambda lib, d, o: lib.segment_reduce(d, "sum", offsets=o), desc="offsets"),
        S(D, Const(L), grad=False, call=raises(lambda lib, d, ln:
                                               lib.segment_reduce(d, "foo", lengths=ln))),
        S(D, Const(np.array([2, 2])), grad=False,
          call=raises(lambda lib, d, ln: lib.segment_reduce(d, "sum", lengths=ln))),
        S(D, Const(L), grad=False, call=raises(lambda lib, d, ln: lib.segment_reduce(d, "sum"))),
    ],
}
