"""Samples for the nn.functional rows of _ops/nn.py (linear layers; losses: samples_loss.py)."""

from .harness import S, make


def F(name):
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


SAMPLES = {
    "linear": [
        S(make(5, 4), make(3, 4), make(3), call=F("linear")),
        S(make(4), make(3, 4), make(3), call=F("linear")),
        S(make(2, 5, 4), make(3, 4), None, call=F("linear")),
        S(make(2, 4), make(1, 4), make(1), call=F("linear")),
    ],
}
