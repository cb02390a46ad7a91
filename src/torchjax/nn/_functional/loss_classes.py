"""nn.functional losses over class indices: nll_loss, cross_entropy, linear_cross_entropy,
multi_margin_loss and multilabel_margin_loss, with PyTorch's checks of the indices (eager mode only, see loss.py)."""

from __future__ import annotations

import numpy as np

from ..._dispatch import FUNCTIONS as _F
from .loss import (
    _need_float,
    _no_grad_for,
    _reduction,
    _require_long,
    _same_dtype,
    _sizes,
    _tname,
    _values,
)

__all__ = [
    "cross_entropy", "linear_cross_entropy", "multi_margin_loss", "multilabel_margin_loss",
    "nll_loss",
]


def _nll_checks(input, target, weight, ignore_index):
    """PyTorch's checks of nll_loss_nd and its kernels, in its order; the class count."""
    nd = input.dim()
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and input.shape[0] != (target.shape[0] if target.dim() else 0):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.dim() else 0}).")
    if nd == 3 or nd > 4:
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(f"Expected target size {_sizes((input.shape[0],) + input.shape[2:])}"
                               f", got {_sizes(target.shape)}")
    _no_grad_for("nll_loss_forward" if nd <= 2 else "nll_loss2d_forward", "weight", weight)
    if target.dtype.name not in ("int64", "uint8"):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_tname(target)}")
    n_classes = input.shape[1 if nd > 1 else 0]
    if nd <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if nd == 1 and target.dim() == 1 and target.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                             f"{target.shape[0]}")
        if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                               f"classes or no classes but got weight tensor of shape: "
                               f"{_sizes(weight.shape)}")
    else:
        if nd == 4 and target.dim() != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {target.dim()}")
        if nd == 4 and (target.shape[0] != input.shape[0] or
                        tuple(target.shape[1:]) != tuple(input.shape[2:])):
            raise RuntimeError(f"size mismatch (got input: {_sizes(input.shape)} , target: "
                               f"{_sizes(target.shape)}")
        if weight is not None and weight.numel() != n_classes:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
    _same_dtype(weight, input)
    _check_class_indices(target, n_classes, ignore_index)
    return n_classes


def _check_class_indices(target, n_classes, ignore_index):
    a = _values(target)
    if a is None or a.size == 0:
        return
    a = a.astype(np.int64)
    bad = (a != ignore_index) & ((a < 0) | (a >= n_classes))
    if bad.any():
        raise IndexError(f"Target {a[bad].flat[0]} is out of bounds.")


def _nd_result(out, input, reduction):
    # PyTorch runs 3-d and >4-d inputs through the 4-d kernel and views the unreduced result
    # back, so its grad_fn is ViewBackward0
    if reduction == "none" and (input.dim() == 3 or input.dim() > 4):
        return out.view(tuple(out.shape))
    return out


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of log-probabilities over the class dim (N, C, d1, ...)."""
    reduction = _reduction(reduction, size_average, reduce)
    _nll_checks(input, target, weight, ignore_index)
    _need_float(input, "nll_loss_out_frame")
    row = "nll_loss" if input.dim() <= 2 else "nll_loss2d"
    out = _F[row](input, target, weight, reduction, ignore_index)
    return _nd_result(out, input, reduction)


def _format_double(v) -> str:
    return f"{v:g}"   # C++ stream formatting, as in PyTorch's message


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy of logits against class indices (N, C, d1, ...) or class probabilities
    (target shaped as input), with class weights, ignore_index and label smoothing."""
    reduction = _reduction(reduction, size_average, reduce)
    _need_float(input, "log_softmax_lastdim_kernel_impl")
    if tuple(input.shape) == tuple(target.shape):
        if not target.is_floating_point():
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got {_tname(target)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if input.dim() == 0:
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        n_classes = input.shape[1 if input.dim() > 1 else 0]
        if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
            raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                               f"{n_classes} classes or no classes but got weight tensor of "
                               f"shape: {_sizes(weight.shape)}")
        _check_label_smoothing(label_smoothing)
        row = "cross_entropy_probs_mean" if reduction == "mean" else "cross_entropy_probs"
        return _F[row](input, target, weight, reduction, max(label_smoothing, 0.0))
    _check_label_smoothing(label_smoothing)
    _nll_checks(input, target, weight, ignore_index)
    if label_smoothing > 0:
        return _F["cross_entropy_smoothed"](input, target, weight, reduction, ignore_index,
                                            label_smoothing)
    row = "cross_entropy" if input.dim() <= 2 else "cross_entropy_2d"
    out = _F[row](input, target, weight, reduction, ignore_index, 0.0)
    return _nd_result(out, input, reduction)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy of the logits linear(input, linear_weight, linear_bias). A weight of shape
    (C, d1, ..., dK, in_features) gives logits (N, C, d1, ..., dK): the K-dimensional loss."""
    if options is not None:
        # PyTorch's chunked path only saves memory (same loss); XLA plans the memory itself
        raise NotImplementedError("torchjax: linear_cross_entropy(options=...) (the chunked "
                                  "computation) is not supported; pass options=None")
    if not 1 <= input.dim() <= 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batch, n_in = tuple(input.shape[:-1]), input.shape[-1]
    if linear_weight.shape[-1] != n_in:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {n_in} and {linear_weight.shape[-1]}, "
                           f"respectively")
    classes = tuple(linear_weight.shape[:-1])  # (C, d1, ..., dK)
    if linear_bias is not None and tuple(linear_bias.shape) != classes:
        raise RuntimeError(f"expected linear_bias shape {classes}, got "
                           f"{tuple(linear_bias.shape)}")
    if len(classes) > 1 and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, {n_in}), "
                           f"got unbatched input with shape {tuple(input.shape)}")
    logits_shape = batch + classes
    probabilities = tuple(target.shape) == logits_shape
    if probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    # one matrix product over the flattened classes, as a Linear layer with C*d1*...*dK outputs
    flat = int(np.prod(classes))
    logits = _F["linear"](input, linear_weight.reshape(flat, n_in),
                          None if linear_bias is None else linear_bias.reshape(flat))
    return cross_entropy(logits.reshape(logits_shape), target, weight=weight,
                         reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)


def _check_label_smoothing(label_smoothing):
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{_format_double(label_smoothing)}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss of scores against class indices."""
    reduction = _reduction(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _no_grad_for("multi_margin_loss", "weight", weight)
    nd = input.dim()
    _check_margin_input(input)
    nframe = input.shape[0] if nd == 2 else 1
    n_classes = input.shape[-1] if nd else 1
    if target.dim() > 1 or target.numel() != nframe:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{nframe}], but got {_sizes(target.shape)}. Input has shape "
                           f"{_sizes(input.shape)}.")
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(f"inconsistent weight size, expected {n_classes} but got "
                           f"{_sizes(weight.shape)}")
    _require_long(target)
    _same_dtype(weight, input)
    _need_float(input, "multi_margin_loss_cpu_kernel")
    a = _values(target)
    if a is not None and ((a < 0) | (a >= n_classes)).any():
        raise RuntimeError("target out of range")
    return _F["multi_margin_loss"](input, target, p, margin, weight, reduction)


def _check_margin_input(input):
    nd = input.dim()
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0) or nd == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {_sizes(input.shape)}")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss; each target row lists class indices, ended by the first -1."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_margin_input(input)
    nd = input.dim()
    n_classes = input.shape[-1] if nd else 1
    if nd <= 1:
        ok = target.dim() <= 1 and target.numel() == n_classes
    else:
        ok = target.dim() == 2 and tuple(target.shape) == tuple(input.shape)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {_sizes(target.shape)} for input of "
                           f"size: {_sizes(input.shape)}")
    _require_long(target)
    _need_float(input, "multilabel_margin_loss_forward_out_frame")
    a = _values(target)
    if a is not None and ((a < -1) | (a >= n_classes)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    return _F["multilabel_margin_loss"](input, target, reduction)
