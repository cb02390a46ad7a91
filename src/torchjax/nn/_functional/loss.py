"""nn.functional losses: PyTorch's argument handling (the deprecated size_average/reduce, the
reduction names) and its checks and error messages, then one row of _ops/loss.py each. This
file has the shared pieces and the regression losses; the others are in loss_classes,
loss_binary, loss_ranking and loss_ctc.

Checks that read tensor values (class indices in range, BCE inputs in [0, 1], CTC lengths) run
in eager mode only; while tracing (torchjax.compile) the values are not known and the check
is skipped, as torchjax's indexing does.
"""

from __future__ import annotations

import warnings

import jax
import numpy as np

from ... import _dtypes
from ..._autograd.grad_mode import is_grad_enabled
from ..._dispatch import FUNCTIONS as _F
from ..._dispatch import _explain_broadcast
from ..._ops.stacking import broadcast_tensors

__all__ = [
    "huber_loss", "l1_loss", "mse_loss", "smooth_l1_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


# -- shared pieces ----------------------------------------------------------------------------

def legacy_reduction(size_average, reduce) -> str:
    """The reduction the deprecated size_average/reduce arguments stand for (with PyTorch's
    deprecation warning)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _reduction(reduction, size_average=None, reduce=None) -> str:
    """The reduction after the deprecated arguments, validated as PyTorch's get_enum does."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=3)
        return "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduced(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _no_grad_for(fname, arg, t):
    # PyTorch refuses, at the call, a tensor requiring grad where its kernel has no derivative
    if t is not None and t.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{fname}' is not differentiable with respect to "
                           f"argument '{arg}'. This input cannot have requires_grad True.")


def _values(t):
    """The values of t as a NumPy array, or None while tracing."""
    a = t._data
    return None if isinstance(a, jax.core.Tracer) else np.asarray(a)


def _sizes(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _tname(t) -> str:
    return _dtypes.SCALAR_NAMES[t.dtype.name]


def _need_float(t, kernel):
    if not (t.is_floating_point() or t.is_complex()):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(t)}'")


def _require_long(t):
    if t.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {_tname(t)}")


def _same_dtype(weight, input):
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_tname(input)} but found {_tname(weight)}")


def _warn_target_size(input, target):
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _check_inplace_broadcast(out_shape, other_shape):
    """PyTorch's checks for `out.mul_(other)`: other broadcasts to out's shape."""
    out_shape, other_shape = tuple(out_shape), tuple(other_shape)
    _explain_broadcast([out_shape, other_shape])
    n = max(len(out_shape), len(other_shape))
    full = [max(a, b) for a, b in zip((1,) * (n - len(out_shape)) + out_shape,
                                      (1,) * (n - len(other_shape)) + other_shape)]
    if tuple(full) != out_shape:
        raise RuntimeError(f"output with shape {_sizes(out_shape)} doesn't match the broadcast "
                           f"shape {_sizes(full)}")


def _invalid_mode(reduction):
    return ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                      "'sum'.")


def _weighted(loss, weight, reduction):
    """PyTorch's per-element weighting of mse_loss and l1_loss (mean divides by the total
    weight)."""
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum()
    raise _invalid_mode(reduction)


def _check_weight_size(weight, input):
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")


# -- regression losses ------------------------------------------------------------------------

def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (optionally weighted per element)."""
    _warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if weight is not None:
        a, b = broadcast_tensors(input, target)
        _check_weight_size(weight, input)
        return _weighted((a - b).pow(2), weight, reduction)
    return _F["mse_loss"](input, target, _reduction(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error (optionally weighted per element)."""
    _warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if weight is not None:
        a, b = broadcast_tensors(input, target)
        _check_weight_size(weight, input)
        return _weighted(_F["l1_loss"](a, b), weight, reduction)
    return _reduced(_F["l1_loss"](input, target), _reduction(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Squared error below beta, absolute error above (L1 when beta is 0)."""
    _warn_target_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return _reduced(_F["l1_loss"](input, target), reduction)
    return _F["smooth_l1_loss"](input, target, reduction, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Squared error below delta, delta-scaled absolute error above (optionally weighted)."""
    _warn_target_size(input, target)
    if weight is None:
        reduction = _reduction(reduction)
        _check_delta(delta)
        return _F["huber_loss"](input, target, reduction, delta)
    a, b = broadcast_tensors(input, target)
    _check_weight_size(weight, input)
    _check_delta(delta)
    loss = _F["huber_loss"](a, b, "none", delta) * weight
    if reduction not in _REDUCTIONS:
        raise _invalid_mode(reduction)
    return _reduced(loss, reduction)


def _check_delta(delta):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
