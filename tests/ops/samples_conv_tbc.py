"""Samples for the row in _ops/conv_tbc.py (torch.conv_tbc, F.conv_tbc)."""

from .harness import S, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(114)


def _ct(lib, x, w, b, *a):
    return lib.conv_tbc(x, w, b, *a)


SAMPLES = {
    "conv_tbc": [
        S(make(7, 2, 3), make(3, 3, 5), make(5)),
        S(make(7, 2, 3), make(3, 3, 5), make(5), 1),
        S(make(5, 1, 2), make(1, 2, 4), make(4), pad=2),
        S(make(6, 3, 2, dtype="float64"), make(2, 2, 3, dtype="float64"),
          make(3, dtype="float64")),
        S(make(7, 2, 3), make(3, 3, 5), make(5),
          call=lambda lib, x, w, b: lib.nn.functional.conv_tbc(x, w, b, 1)),
        S(make(2, 3), make(3, 3, 5), make(5), grad=False, call=raises(_ct)),
        S(make(7, 2, 3), make(3, 5), make(5), grad=False, call=raises(_ct)),
        S(make(7, 2, 3), make(3, 3, 5), make(2), grad=False, call=raises(_ct)),
        S(make(7, 2, 3), make(3, 2, 5), make(5), grad=False, call=raises(_ct)),
    ],
}
