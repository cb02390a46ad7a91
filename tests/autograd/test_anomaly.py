"""Anomaly mode: PyTorch's warnings and errors, naming the node and the forward line."""

from __future__ import annotations

import warnings

import pytest
import torch

import torchjax


def _nan_backward(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = lib.sqrt(x)  # the line the warning must name
    (y * 0).sum().backward()  # inf * 0 -> NaN in SqrtBackward0


@pytest.mark.parametrize("lib", [torch, torchjax], ids=["torch", "torchjax"])
def test_nan_in_backward_raises_and_names_the_forward_line(lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            with pytest.raises(RuntimeError,
                               match="Function 'SqrtBackward0' returned nan values in its 0th "
                                     "output."):
                _nan_backward(lib)
    messages = [str(w.message) for w in caught]
    assert any("Anomaly Detection has been enabled" in m for m in messages)
    trace = [m for m in messages if m.startswith("Error detected in SqrtBackward0")]
    assert trace, messages
    assert "y = lib.sqrt(x)  # the line the warning must name" in trace[0]
    assert "torchjax/" not in trace[0].split("Traceback of forward call")[1]


@pytest.mark.parametrize("lib", [torch, torchjax], ids=["torch", "torchjax"])
def test_without_anomaly_mode_nan_passes_silently(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    (lib.sqrt(x) * 0).sum().backward()
    assert lib.isnan(x.grad).tolist() == [True, False]


@pytest.mark.parametrize("lib", [torch, torchjax], ids=["torch", "torchjax"])
def test_check_nan_false_and_switches(lib):
    assert not lib.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.autograd.detect_anomaly(check_nan=False):
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            _nan_backward(lib)  # no check: no error
    assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
    with lib.autograd.set_detect_anomaly(True):
        assert lib.is_anomaly_enabled()
    assert not lib.is_anomaly_enabled()
    lib.autograd.set_detect_anomaly(True)
    assert lib.is_anomaly_enabled()
    lib.autograd.set_detect_anomaly(False)
    assert not lib.is_anomaly_enabled()


@pytest.mark.parametrize("lib", [torch, torchjax], ids=["torch", "torchjax"])
def test_error_inside_a_backward_warns_with_the_forward_stack(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            y = x.exp()
            y.add_(1)  # exp saved its result: backward must fail
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()
    assert any(str(w.message).startswith("Error detected in ExpBackward0") for w in caught)


def test_anomaly_mode_with_create_graph():
    x = torchjax.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torchjax.autograd.detect_anomaly():
            (g,) = torchjax.autograd.grad((x ** 3).sum(), x, create_graph=True)
            with pytest.raises(RuntimeError, match="returned nan values"):
                torchjax.autograd.grad((torchjax.sqrt(g) * 0).sum(), x)
