"""Samples for the row in _ops/native_dropout.py (torch.native_dropout) where no random draw
decides the result: evaluation, p = 0 and p = 1 (the draws themselves are checked by their
statistics in tests/test_torch_nn_forms.py)."""

from .harness import S, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(112)


def _nd(lib, x, p, train):
    return lib.native_dropout(x, p, train)


SAMPLES = {
    "_native_dropout_apply": [
        S(make(3, 4), 0.3, False, call=_nd),
        S(make(3, 4), 0.0, True, call=_nd),
        S(make(3, 4), 1.0, True, call=_nd),
        S(make(2, 3, dtype="float64"), 0.5, False, call=_nd),
        S(make(3, 4), 1.5, True, grad=False, call=raises(_nd)),
        S(make(3, dtype="int64"), 0.5, True, grad=False, call=raises(_nd)),
    ],
}
