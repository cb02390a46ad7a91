"""Samples for the row of _ops/strided.py: as_strided, a view of its base's storage."""

from .harness import S, make

# own seeds: drawing from the shared stream would change the samples of every file after this
# one (the table imports them in name order)

SAMPLES = {
    "_as_strided": [
        S(make(12, seed=1), call=lambda lib, x: x.as_strided((3, 3), (3, 1))),
        S(make(12, seed=2), call=lambda lib, x: x.as_strided((2, 2), (1, 1), 2),
          desc="overlapping windows: gradients add up"),
        S(make(3, 4, seed=3), call=lambda lib, x: lib.as_strided(x, (4,), (3,)), desc="function form"),
        S(make(3, 4, seed=4), call=lambda lib, x: x.t().as_strided((2, 3), (1, 4), 1),
          desc="of a view: its base's storage"),
    ],
}
