"""The shared pieces of the nn.Module tests (test_module*.py, test_linear.py): a model with
shared parameters and modules and buffers of both kinds, weight copying and error comparison
between PyTorch and torchjax."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import torchjax

LIBS = (torch, torchjax)
RNG = np.random.default_rng(0)


def _error(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value), str(info.value)


def same_error(fn):
    """fn(lib) raises the same exception type and message in both libraries."""
    expected, got = (_error(fn, lib) for lib in LIBS)
    assert got == expected


def to_jax_state(sd):
    return OrderedDict((k, torchjax.tensor(v.detach().numpy())) for k, v in sd.items())


def copy_weights(tm, jm):
    jm.load_state_dict(to_jax_state(tm.state_dict()))


def make_net(lib):
    """A model with a shared parameter and module, buffers of both kinds and a None slot."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 4)
            self.register_buffer("steps", lib.zeros((), dtype=lib.int64))
            self.register_buffer("cache", lib.ones(2), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            return self.lin(x).relu()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.scale = nn.Parameter(lib.ones(4))
            self.head = nn.Linear(4, 2)
            self.tied = self.block  # the same module twice
            self.head2 = nn.Linear(4, 2)
            self.head2.weight = self.head.weight  # a shared parameter

        def forward(self, x):
            return self.head(self.block(x) * self.scale)

    return Net()
