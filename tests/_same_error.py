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


def outcome(f, lib, plain):
    """plain(f(lib)), or the error f raised as "Type: message", so that both libraries'
    outcomes compare whether they return or raise."""
    try:
        r = f(lib)
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return f"{type(e).__name__}: {e}"
    return plain(r)
