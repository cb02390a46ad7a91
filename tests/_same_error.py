"""One check shared by tests that hold a table of mistakes: the same call raises the same
exception type with PyTorch's key phrase in torch and in torchjax."""

import pytest
import torch

import torchjax


def raises_as_pytorch(fn, exc, phrase) -> None:
    for lib in (torch, torchjax):
        with pytest.raises(exc) as e:
            fn(lib)
        assert phrase in str(e.value), (lib.__name__, str(e.value))
