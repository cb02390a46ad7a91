"""torchjax.nn.functional: the functional forms of layers and losses."""

from __future__ import annotations

from .._dispatch import PREPARED, call_op


def _row(name):
    prep = PREPARED[name]
    return prep


def linear(input, weight, bias=None):
    """input @ weight.T + bias (one tape node, as PyTorch's addmm)."""
    return call_op("linear", input, weight, bias)


def relu(input, inplace: bool = False):
    return input.relu_() if inplace else input.relu()


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return input.log_softmax(dim, dtype=dtype)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return call_op("mse_loss", input, target, size_average, reduce, reduction, weight)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return call_op("l1_loss", input, target, size_average, reduce, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    return call_op("cross_entropy", input, target, weight, size_average, ignore_index, reduce,
                   reduction, label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    return call_op("nll_loss", input, target, weight, size_average, ignore_index, reduce,
                   reduction)
