"""nn.functional binary and probabilistic losses: binary_cross_entropy (with logits), kl_div,
poisson and gaussian negative log likelihoods, the soft margin losses."""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from ... import _dtypes
from ..._dispatch import FUNCTIONS as _F
from ..._dispatch import _explain_broadcast
from ..._tensor import Tensor
from ..._x64 import scope
from .loss import (
    _REDUCTIONS,
    _check_inplace_broadcast,
    _need_float,
    _no_grad_for,
    _reduced,
    _reduction,
    _sizes,
    _tname,
    _values,
    legacy_reduction,
)

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "gaussian_nll_loss", "kl_div",
    "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
]


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """Binary cross entropy of probabilities (logs clamped at -100), optionally weighted."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        _expand_check(weight, target)
    _no_grad_for("binary_cross_entropy", "weight", weight)
    _need_float(input, "binary_cross_entropy")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_tname(target)} but expected {_tname(input)}")
    x = _values(input)
    if x is not None and not ((x >= 0) & (x <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    return _F["binary_cross_entropy"](input, target, weight, reduction)


def _expand_check(weight, target):
    """F.binary_cross_entropy's weight.expand(broadcast_shapes(target, weight)), then the
    kernel's in-place product with the loss."""
    ts, ws = tuple(target.shape), tuple(weight.shape)
    full = [1] * max(len(ts), len(ws))
    for k, (s, size) in enumerate(((ts, target.size()), (ws, weight.size()))):
        for i in range(-1, -len(s) - 1, -1):
            if s[i] != 1 and s[i] != full[i]:
                if full[i] != 1:
                    raise RuntimeError(
                        f"Attempting to broadcast a dimension of length {s[i]} at {i}! "
                        f"Mismatching argument at index {k} had {size}; but expected shape "
                        f"should be broadcastable to {_sizes(full)}")
                full[i] = s[i]
    _check_inplace_broadcast(ts, full)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """Binary cross entropy of logits, computed stably; pos_weight weighs the positive term and
    broadcasts with target."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    fname = "binary_cross_entropy_with_logits"
    _no_grad_for(fname, "weight", weight)
    _no_grad_for(fname, "pos_weight", pos_weight)
    if pos_weight is not None:
        _explain_broadcast([tuple(pos_weight.shape), tuple(target.shape)])
        _check_inplace_broadcast(input.shape, np.broadcast_shapes(tuple(pos_weight.shape),
                                                                  tuple(target.shape)))
    if weight is not None:
        _check_inplace_broadcast(input.shape, weight.shape)
    return _F[fname](input, target, weight, pos_weight, reduction)


_KL_MEAN_WARNING = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence of target from input (log-probabilities); 'batchmean' divides the sum by
    the batch size."""
    if size_average is not None or reduce is not None:
        red = _reduction(reduction, size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(_KL_MEAN_WARNING, stacklevel=2)
        red = "sum" if reduction == "batchmean" else _reduction(reduction)
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    loss = _F["kl_div_log_target" if log_target else "kl_div"](input, target, log_target)
    out = _reduced(loss, red)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Negative log-likelihood of a Poisson target with rate exp(input) (or input)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    row = "poisson_nll_loss_full" if full else "poisson_nll_loss"
    return _reduced(_F[row](input, target, log_input, full, eps), reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of a Gaussian target with mean input and variance var (shaped as
    input, as input without its last dim, or with one dim of size 1)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        dt = input.dtype.np if input.is_floating_point() else _dtypes.get_default_dtype().np
        with scope():  # dt may be float64
            var = Tensor._wrap(jnp.full(tuple(input.shape), var, dt))
    elif not isinstance(var, Tensor):
        # PyTorch calls torch.any on a Python bool here
        raise TypeError("any() received an invalid combination of arguments - got (bool), but "
                        "expected one of:")
    else:
        v = _values(var)
        if v is not None and (v < 0).any():
            raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and
                  sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    row = "gaussian_nll_loss_full" if full else "gaussian_nll_loss"
    return _reduced(_F[row](input, target, var, full, eps), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per-sample mean over classes of the binary logistic loss, optionally class-weighted."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if input.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    loss = _F["multilabel_soft_margin_loss"](input, target, weight)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _reduced(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss log(1 + exp(-target * input))."""
    reduction = _reduction(reduction, size_average, reduce)
    _no_grad_for("soft_margin_loss", "target", target)
    return _F["soft_margin_loss"](input, target, reduction)
