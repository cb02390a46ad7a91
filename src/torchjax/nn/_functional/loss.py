"""nn.functional losses: PyTorch's argument handling (the deprecated size_average/reduce, the
reduction names) and its checks and error messages, then one row of _ops/loss.py each.

Checks that read tensor values (class indices in range, BCE inputs in [0, 1], CTC lengths) run
in eager mode only; while tracing (torchjax.compile) the values are not known and the check
is skipped, as torchjax's indexing does.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtypes
from ..._autograd.grad_mode import is_grad_enabled
from ..._dispatch import FUNCTIONS as _F
from ..._dispatch import _explain_broadcast
from ..._ops.stacking import broadcast_tensors
from ..._tensor import Tensor
from ..._x64 import scope, scoped

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
    "cross_entropy", "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss",
    "kl_div", "l1_loss", "margin_ranking_loss", "mse_loss", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "nll_loss", "poisson_nll_loss",
    "smooth_l1_loss", "soft_margin_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
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


# -- class indices: nll_loss and cross_entropy ------------------------------------------------

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


# -- binary and probabilistic losses ----------------------------------------------------------

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


# -- embedding and ranking losses -------------------------------------------------------------

def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target is 1, max(0, margin - input) where target is -1."""
    reduction = _reduction(reduction, size_average, reduce)
    # target only selects between terms: PyTorch gives it no gradient
    return _reduced(_F["hinge_embedding_loss"](input, target.detach(), margin), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(input1, input2) for target 1, max(0, cos - margin) for target -1."""
    reduction = _reduction(reduction, size_average, reduce)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if td == 1 else 1
    if input1.dim() != want:
        raise RuntimeError(f"{td}D target tensor expects {want}D input tensors, but found "
                           f"inputs with sizes {_sizes(input1.shape)} and "
                           f"{_sizes(input2.shape)}.")
    _explain_broadcast([tuple(input1.shape), tuple(input2.shape)])
    if td == 1:
        rows = np.broadcast_shapes(input1.shape[:1], input2.shape[:1])
        _explain_broadcast([tuple(target.shape), rows])
    out = _F["cosine_embedding_loss"](input1, input2, target.detach(), margin)
    return _reduced(out, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    _explain_broadcast([tuple(input1.shape), tuple(input2.shape)])
    diff = np.broadcast_shapes(tuple(input1.shape), tuple(input2.shape))
    _explain_broadcast([tuple(target.shape), diff])
    return _reduced(_F["margin_ranking_loss"](input1, input2, target, margin), reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == p == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, "
                           f"and negative {n}D inputs")


def _check_margin(margin):
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_margin(margin)
    _check_triplet_dims(anchor, positive, negative)
    out = _F["triplet_margin_loss"](anchor, positive, negative, margin, p, eps, swap)
    return _reduced(out, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """The triplet margin loss with any distance function (pairwise_distance by default)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_margin(margin)
    _check_triplet_dims(anchor, positive, negative)
    if distance_function is None:
        # PyTorch's default, torch.pairwise_distance (p=2, eps=1e-6), is the triplet row's
        out = _F["triplet_margin_loss"](anchor, positive, negative, margin, 2.0, 1e-6, swap)
        return _reduced(out, reduction)
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance_function(positive, negative))
    return _reduced((margin + d_pos - d_neg).clamp_min(0), reduction)


# -- connectionist temporal classification ----------------------------------------------------

_CTC_WHERE = "(while checking arguments for ctc_loss_allocate_outputs)"


@scoped  # int64 lengths
def _ctc_lengths(lengths, name):
    """Lengths given as a tensor or a sequence of ints, as an int64 tensor."""
    if isinstance(lengths, Tensor):
        if lengths.is_floating_point() or lengths.is_complex():
            raise RuntimeError(f"{name} must be integral")
        return lengths.reshape(-1)
    return Tensor._wrap(jnp.asarray(np.asarray(lengths, dtype=np.int64).reshape(-1)))


def _ctc_checks(log_probs, targets, in_len, tg_len, blank):
    """PyTorch's argument checks of ctc_loss, in its order."""
    if targets.dim() not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional "
                           f"tensor for argument #2 'targets' {_CTC_WHERE}")
    n, n_labels = log_probs.shape[1], log_probs.shape[2]
    if not 0 <= blank < n_labels:
        raise RuntimeError("blank must be in label range")
    if in_len.numel() != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tg_len.numel() != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    tl, il = _values(tg_len), _values(in_len)
    if tl is not None:
        for v in tl:
            if v < 0:
                raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                                   f"value {v} {_CTC_WHERE}")
        if targets.dim() == 1 and targets.shape[0] != int(tl.sum()):
            raise RuntimeError(f"Expected tensor to have size {int(tl.sum())} at dimension 0, "
                               f"but got size {targets.shape[0]} for argument #2 'targets' "
                               f"{_CTC_WHERE}")
    if targets.dim() == 2:
        if targets.shape[0] != n:
            raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets' {_CTC_WHERE}")
        if tl is not None and tl.size and tl.max() > targets.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {tl.max()} at dimension "
                               f"1, but got size {targets.shape[1]} for argument #2 'targets' "
                               f"{_CTC_WHERE}")
    if il is not None:
        for v in il:
            if v < 0:
                raise RuntimeError(f"Expected input_lengths to have value at least 0, but got "
                                   f"value {v} {_CTC_WHERE}")
            if v > log_probs.shape[0]:
                raise RuntimeError(f"Expected input_lengths to have value at most "
                                   f"{log_probs.shape[0]}, but got value {v} {_CTC_WHERE}")


@scoped  # int64 lengths and positions
def _padded_targets(targets, tg_len):
    """Concatenated targets (sum of lengths,) as padded rows (N, longest)."""
    tl = _values(tg_len)
    t = targets._data
    width = int(tl.max()) if tl is not None and tl.size else t.shape[0]
    lengths = tg_len._data.astype(jnp.int64)
    starts = jnp.cumsum(lengths) - lengths
    pos = starts[:, None] + jnp.arange(width)[None, :]
    rows = t[jnp.clip(pos, 0, max(t.shape[0] - 1, 0))] if t.shape[0] else \
        jnp.zeros(pos.shape, t.dtype)
    return Tensor._wrap(jnp.where(jnp.arange(width)[None, :] < lengths[:, None], rows, 0))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss of log_probs (T, N, C) or (T, C) against
    padded (N, S) or concatenated targets; mean divides each loss by its target length."""
    reduction = _reduction(reduction)
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        kinds = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in
                          (log_probs, targets, input_lengths, target_lengths))
        raise TypeError(f"ctc_loss() received an invalid combination of arguments - got "
                        f"({kinds}, int, int, bool), but expected one of:")
    in_len = _ctc_lengths(input_lengths, "input_lengths")
    tg_len = _ctc_lengths(target_lengths, "target_lengths")
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional "
                           f"tensor for argument #1 'log_probs' {_CTC_WHERE}")
    _ctc_checks(log_probs, targets, in_len, tg_len, blank)
    if targets.dim() == 1:
        targets = _padded_targets(targets, tg_len)
    row = "ctc_loss_zero_infinity" if zero_infinity else "ctc_loss"
    loss = _F[row](log_probs, targets, in_len, tg_len, blank, bool(zero_infinity))
    if reduction == "mean":
        loss = loss / tg_len.clamp_min(1)
    loss = _reduced(loss, reduction)
    return loss if batched or reduction != "none" else loss.squeeze(0)

