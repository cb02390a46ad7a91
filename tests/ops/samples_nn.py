"""Samples for the nn.functional rows (linear layers and losses)."""

import numpy as np

from .harness import Const, S, make


def F(name):
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


def _targets(*shape, classes=3, seed=0):
    return np.random.default_rng(seed).integers(0, classes, size=shape)


SAMPLES = {
    "linear": [
        S(make(5, 4), make(3, 4), make(3), call=F("linear")),
        S(make(4), make(3, 4), make(3), call=F("linear")),
        S(make(2, 5, 4), make(3, 4), None, call=F("linear")),
        S(make(2, 4), make(1, 4), make(1), call=F("linear")),
    ],
    "mse_loss": [
        S(make(4, 3), make(4, 3), call=F("mse_loss")),
        S(make(4, 3), make(4, 3), reduction="sum", call=F("mse_loss")),
        S(make(4, 3), make(4, 3), reduction="none", call=F("mse_loss")),
        S(make(), make(), call=F("mse_loss")),
    ],
    "l1_loss": [
        S(make(4, 3), make(4, 3), call=F("l1_loss")),
        S(make(5), make(5), reduction="none", call=F("l1_loss")),
        S(make(2, 2), make(2, 2), reduction="sum", call=F("l1_loss")),
    ],
    "cross_entropy": [
        S(make(6, 3), _targets(6), call=F("cross_entropy")),
        S(make(6, 3), _targets(6), reduction="sum", call=F("cross_entropy")),
        S(make(6, 3), _targets(6), reduction="none", call=F("cross_entropy")),
        S(make(6, 3), _targets(6), ignore_index=1, call=F("cross_entropy")),
        S(make(6, 3), _targets(6), label_smoothing=0.1, call=F("cross_entropy")),
        S(make(6, 3), _targets(6), Const(make(3, low=0.1, high=2)), call=F("cross_entropy")),
        S(make(3), np.array(1), call=F("cross_entropy")),
        S(make(2, 3, 4), _targets(2, 4), call=F("cross_entropy")),
        S(make(2, 3, 2, 2), _targets(2, 2, 2), call=F("cross_entropy")),
        S(make(4, 3), np.random.default_rng(1).dirichlet(np.ones(3), 4).astype(np.float32),
          call=F("cross_entropy")),
    ],
    "nll_loss": [
        S(make(6, 3, low=-3, high=0), _targets(6), call=F("nll_loss")),
        S(make(6, 3, low=-3, high=0), _targets(6), reduction="none", call=F("nll_loss")),
        S(make(6, 3, low=-3, high=0), _targets(6), ignore_index=0, call=F("nll_loss")),
        S(make(6, 3, low=-3, high=0), _targets(6), Const(make(3, low=0.1, high=2)),
          call=F("nll_loss")),
    ],
}
