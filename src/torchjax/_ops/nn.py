"""Rows behind torchjax.nn.functional: linear layers and losses (each one tape node)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtypes
from ._registry import op

_NN = dict(function=False, method=False, namespace="torch.nn.functional")


def _linear_explain(input, weight, bias=None, **_):
    a, w = tuple(input.shape), tuple(weight.shape)
    if len(w) == 2 and a and a[-1] != w[1]:
        rows = 1
        for d in a[:-1]:
            rows *= d
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{a[-1]} and "
                           f"{w[1]}x{w[0]})")


_M_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int"}


@op(tensors=("input", "weight", "bias"), grad="AddmmBackward0", explain=_linear_explain,
    promote="none", **_NN)
def linear(input, weight, bias=None):
    """input @ weight.T + bias."""
    if input.dtype != weight.dtype:  # PyTorch does not promote here
        a, b = (_M_NAMES.get(str(d), str(d)) for d in (input.dtype, weight.dtype))
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a} != {b}")
    out = jnp.matmul(input, weight.T)
    if bias is not None:
        bias = jnp.asarray(bias)
        if bias.dtype != out.dtype:
            a, b = (_dtypes.SCALAR_NAMES[_dtypes.from_jax(d).name] for d in (bias.dtype,
                                                                             out.dtype))
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {a} and {b}")
        out = out + bias
    return out


def _reduce(loss, reduction):
    if reduction == "mean":
        return jnp.mean(loss)
    if reduction == "sum":
        return jnp.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _mse_explain(input, target, **_):
    if tuple(input.shape) != tuple(target.shape):
        import warnings
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=3)


@op(tensors=("input", "target"), grad="MseLossBackward0", explain=_mse_explain, **_NN)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error."""
    if weight is not None:
        raise NotImplementedError("mse_loss(weight=...) is not supported yet")
    return _reduce(jnp.square(input - target), _legacy_reduction(size_average, reduce,
                                                                 reduction))


@op(tensors=("input", "target"), grad="L1LossBackward0", **_NN)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean absolute error."""
    return _reduce(jnp.abs(input - target), _legacy_reduction(size_average, reduce, reduction))


def _legacy_reduction(size_average, reduce, reduction):
    # PyTorch's deprecated size_average/reduce arguments override reduction when given
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _nll(logp, target, weight, ignore_index, reduction, label_smoothing):
    """Negative log-likelihood over class dim 1 (or 0 for unbatched input)."""
    cdim = 1 if logp.ndim > 1 else 0
    n_classes = logp.shape[cdim]
    if jnp.issubdtype(target.dtype, jnp.inexact):
        # class probabilities
        w = 1.0 if weight is None else jnp.reshape(weight, (-1,) + (1,) * (logp.ndim - cdim - 1))
        t = target
        if label_smoothing:
            t = t * (1 - label_smoothing) + label_smoothing / n_classes
        loss = -jnp.sum(logp * t * w, axis=cdim)
        if reduction == "mean":
            return jnp.sum(loss) / (loss.size if loss.ndim else 1)
        return _reduce(loss, reduction)
    tgt = jnp.expand_dims(target, cdim)
    valid = target != ignore_index
    safe = jnp.where(jnp.expand_dims(valid, cdim), tgt, 0)
    picked = -jnp.squeeze(jnp.take_along_axis(logp, safe, axis=cdim), cdim)
    w = jnp.ones((n_classes,), logp.dtype) if weight is None else weight
    wt = jnp.where(valid, w[jnp.where(valid, target, 0)], 0)
    loss = picked * wt
    if label_smoothing:
        ws = w.reshape((-1,) + (1,) * (logp.ndim - cdim - 1))
        smooth = -jnp.sum(logp * ws, axis=cdim) * valid
        loss = (1 - label_smoothing) * loss + label_smoothing / n_classes * smooth
        if reduction == "mean":
            return jnp.sum(loss) / jnp.sum(wt)
        return _reduce(loss, reduction)
    if reduction == "mean":
        return jnp.sum(loss) / jnp.sum(wt)
    return _reduce(loss, reduction)


def _ce_explain(input, target, **_):
    if input.ndim >= 2 and target.dtype.is_floating_point is False and \
            tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise RuntimeError(f"Expected input batch_size ({input.shape[0]}) to match target "
                           f"batch_size ({target.shape[0] if target.ndim else 0}).")


@op(tensors=("input", "target", "weight"), promote="none", grad="NllLossBackward0",
    explain=_ce_explain, **_NN)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim followed by the negative log-likelihood."""
    cdim = 1 if input.ndim > 1 else 0
    if jnp.issubdtype(target.dtype, jnp.inexact):
        target = target.astype(input.dtype)
    logp = jax.nn.log_softmax(input, axis=cdim)
    return _nll(logp, target, weight, ignore_index,
                _legacy_reduction(size_average, reduce, reduction), label_smoothing)


@op(tensors=("input", "target", "weight"), promote="none", grad="NllLossBackward0", **_NN)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of log-probabilities over the class dim."""
    return _nll(input, target, weight, ignore_index,
                _legacy_reduction(size_average, reduce, reduction), 0.0)
