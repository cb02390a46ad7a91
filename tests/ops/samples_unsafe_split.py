"""Samples for the rows in _ops/unsafe_split.py."""

from .harness import S, method, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(102)

SAMPLES = {
    "unsafe_split": [
        S(make(5, 2), 2),
        S(make(4, 6), 4, 1),
        S(make(4, 6), 3, call=lambda lib, x, s: x.unsafe_split(s, dim=1)),
        S(make(7, dtype="int64"), 3),
        S(make(5, 2), [2, 3], grad=False,
          call=raises(lambda lib, x, s: lib.unsafe_split(x, s))),
        S(make(5, 2), -1, grad=False, call=raises(lambda lib, x, s: lib.unsafe_split(x, s))),
    ],
    "unsafe_split_with_sizes": [
        S(make(3, 6), [1, 2, 3], 1),
        S(make(3, 6), (6,), dim=-1),
        S(make(3, 6), [0, 3], call=method("unsafe_split_with_sizes")),
        S(make(3, 6), [2, 3], grad=False,
          call=raises(lambda lib, x, s: lib.unsafe_split_with_sizes(x, s))),
    ],
    "unsafe_chunk": [
        S(make(6, 2), 3),
        S(make(5, 2), 3),
        S(make(3, 7), 3, 1, call=method("unsafe_chunk")),
        S(make(3, 7), chunks=2, dim=-1),
        S(make(6, dtype="int32"), 2),
        S(make(6), 0, grad=False, call=raises(lambda lib, x, c: lib.unsafe_chunk(x, c))),
    ],
}
