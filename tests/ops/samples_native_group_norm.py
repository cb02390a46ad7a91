"""Samples for the row in _ops/native_group_norm.py."""

from .harness import S, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(111)


def _out(lib, x, w, b, *args):
    """The output alone (the statistics pass no gradient back, in PyTorch as here)."""
    return lib.native_group_norm(x, w, b, *args)[0]


SAMPLES = {
    "native_group_norm": [
        S(make(2, 6, 4), make(6), make(6), 2, 6, 4, 3, 1e-5, call=_out),
        S(make(2, 6, 2, 2), None, None, 2, 6, 4, 2, 1e-3, call=_out),
        S(make(2, 6, 4), make(6), make(6), 2, 6, 4, 3, 1e-5, grad=False),  # with the stats
        S(make(3, 4, 5, dtype="float64"), None, None, 3, 4, 5, 4, 1e-5, grad=False),
        S(make(2, 6, 4), None, None, 3, 6, 4, 3, 1e-5, grad=False,
          call=raises(lambda lib, x, w, b, *a: lib.native_group_norm(x, w, b, *a))),
    ],
}
