"""The `torch.X` forms of layers and losses that torch.nn.functional also has (torch.layer_norm,
torch.dropout, torch.kl_div, ...), with the signatures of PyTorch's native functions.

They differ from F.X in ways scripts notice: losses take `reduction` as the int enum of
ATen (0 none, 1 mean, 2 sum; any other int is no reduction, as ATen's apply_loss_reduction
does), dropout's `train` is positional and required, batch_norm's weight and bias come before
the running statistics, stride `[]` means the kernel size, and F's Python-side checks and
warnings that ATen lacks (kl_div's 'mean' warning, triplet's margin check) are not made. Each
calls the op table row or the nn.functional composite that F.X uses: no math of its own.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _embedding_bag_outputs, _legacy_types
from ._dispatch import FUNCTIONS as _F
from ._tensor import Tensor
from .nn import functional as F
from .nn._functional import dropout as _dropout
from .nn._functional import loss as _loss
from .nn._functional import loss_ranking as _loss_ranking
from .nn._functional import normalization as _norm

__all__ = [
    "layer_norm", "group_norm", "rms_norm", "batch_norm", "instance_norm", "embedding",
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
    "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "kl_div", "binary_cross_entropy_with_logits",
    "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss",
    "triplet_margin_loss", "bilinear", "ctc_loss", "threshold_", "embedding_renorm_",
    "embedding_bag",
    "native_layer_norm", "native_batch_norm",
]


def _type_name(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _reduction(fname: str, position: int, reduction) -> str:
    """ATen's int reduction as F's string: 1 mean, 2 sum, anything else none."""
    if not isinstance(reduction, numbers.Integral) or isinstance(reduction, bool):
        # (PyTorch names the position only when the argument was passed by position)
        raise TypeError(f"{fname}(): argument 'reduction' must be int, not "
                        f"{_type_name(reduction)}")
    return {1: "mean", 2: "sum"}.get(int(reduction), "none")


def _check_bool(fname: str, name: str, value) -> bool:
    # PyTorch's argument parser takes only bools here (train=None or 1 is a TypeError)
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fname}(): argument '{name}' must be bool, not {_type_name(value)}")
    return bool(value)


# -- normalization -------------------------------------------------------------------------------

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """F.layer_norm; cudnn_enable picks a CUDA kernel in PyTorch and changes nothing here."""
    return _F["layer_norm"](input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """F.group_norm; cudnn_enabled changes nothing here."""
    return _F["group_norm"](input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _F["rms_norm"](input, normalized_shape, weight, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """F.batch_norm's row (running statistics updated in place in training) without F's
    Python-side batch-size and eps checks, which ATen's batch_norm does not make."""
    training = _check_bool("batch_norm", "training", training)
    res = _F["_batch_norm"](input, weight, bias, running_mean, running_var, training, momentum,
                            eps)
    return _norm._store_stats(res, running_mean, running_var, kernel=True)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    use_input_stats = _check_bool("instance_norm", "use_input_stats", use_input_stats)
    res = _F["_instance_norm"](input, weight, bias, running_mean, running_var, use_input_stats,
                               momentum, eps)
    return _norm._store_stats(res, running_mean, running_var, kernel=False)


def _stats(x, dims, eps):
    """The mean and 1 / sqrt(biased variance + eps) over dims (keepdim), without gradient, in
    float32 for half types (PyTorch's accumulation), returned in x's dtype."""
    from ._autograd.grad_mode import no_grad
    with no_grad():
        xf = x.detach()
        half = xf.dtype.itemsize < 4
        xf = xf.float() if half else xf
        mean = xf.mean(dims, keepdim=True)
        rstd = ((xf - mean).square().mean(dims, keepdim=True) + eps).rsqrt()
        return mean.to(x.dtype), rstd.to(x.dtype)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(layer_norm's output, the mean, 1 / std): the statistics keep a size-1 dim for each
    normalized one and carry no gradient."""
    out = _F["layer_norm"](input, normalized_shape, weight, bias, eps)
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    mean, rstd = _stats(input, dims, eps)
    return out, mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """(batch_norm's output, the batch mean, 1 / std per channel); in evaluation the two
    statistics are empty, as PyTorch's."""
    out = batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                     True)
    if not training:
        empty = input.new_empty(0).detach()
        return out, empty, empty.clone()
    dims = [0] + list(range(2, input.dim()))
    mean, rstd = _stats(input, dims, eps)
    c = input.shape[1]
    return out, mean.reshape(c), rstd.reshape(c)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """F.embedding(indices, weight): ATen's padding_idx is a row number, a negative one (the
    default -1) meaning none, where F counts negative indices from the end."""
    if padding_idx is None or padding_idx < 0:
        padding_idx = None
    return _norm.embedding(indices, weight, padding_idx, None, 2.0, scale_grad_by_freq, sparse)


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """F.embedding_bag with ATen's arguments (weight first, mode 0 sum / 1 mean / 2 max) and
    its four results: (the bags' values, offset2bag, bag_size, max_indices)."""
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{type(offsets).__name__}")
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    out = _norm.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                              ("sum", "mean", "max")[mode], sparse, per_sample_weights,
                              include_last_offset, padding_idx)
    row = None if padding_idx is None else padding_idx % weight.size(0)  # -1: the last row
    return (out, *_embedding_bag_outputs.outputs(weight, indices, offsets, mode,
                                                  include_last_offset, row,
                                                  fast=padding_idx is None))


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescale in place the rows of input that indices name whose norm exceeds max_norm (what
    F.embedding(max_norm=) does before its lookup); returns input."""
    from ._autograd.grad_mode import STATE
    if STATE.grad_enabled and input.requires_grad and input.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if indices.dtype not in _norm._INDEX_TYPES:
        raise RuntimeError(
            f"Expected tensor for argument #2 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {_legacy_types.type_name(indices)} instead (while "
            f"checking arguments for embedding_renorm_)")
    n = input.size(0)
    _norm._check_index_range(indices, n, lambda pos, v: IndexError(
        f"select(): index {v} out of range for tensor of size "
        f"[{', '.join(map(str, input.shape))}] at dimension 0"))
    _norm._renorm_(input, indices, max_norm, norm_type)
    return input


# -- dropout: in PyTorch's torch.X forms the probability error is a RuntimeError -----------------

def _dropout_form(fname: str, feature: bool, alpha: bool, inplace: bool):
    def form(input, p, train):
        train = _check_bool(fname, "train", train)
        if p < 0.0 or p > 1.0:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        return _dropout._dropout_impl(input, p, train, inplace, feature=feature, alpha=alpha)

    form.__name__ = form.__qualname__ = fname
    form.__doc__ = f"torch.{fname}(input, p, train): " + (
        "written into input." if inplace else "a new tensor (input itself when not train).")
    return form


dropout = _dropout_form("dropout", False, False, False)
dropout_ = _dropout_form("dropout_", False, False, True)
alpha_dropout = _dropout_form("alpha_dropout", False, True, False)
alpha_dropout_ = _dropout_form("alpha_dropout_", False, True, True)
feature_dropout = _dropout_form("feature_dropout", True, False, False)
feature_dropout_ = _dropout_form("feature_dropout_", True, False, True)
feature_alpha_dropout = _dropout_form("feature_alpha_dropout", True, True, False)
feature_alpha_dropout_ = _dropout_form("feature_alpha_dropout_", True, True, True)


# -- pooling -------------------------------------------------------------------------------------

def _stride(stride):
    """ATen's default stride is `[]`: the kernel size, F's None."""
    if stride is None or (not isinstance(stride, numbers.Integral) and len(stride) == 0):
        return None
    return stride


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """(values, indices)."""
    return _F["max_pool1d_with_indices"](input, kernel_size, _stride(stride), padding, dilation,
                                         ceil_mode)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    return _F["avg_pool1d"](input, kernel_size, _stride(stride), padding, ceil_mode,
                            count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    return _F["adaptive_avg_pool1d"](input, output_size)


def adaptive_max_pool1d(input, output_size):
    """(values, indices), always: ATen's adaptive_max_pool1d has no return_indices."""
    return _F["adaptive_max_pool1d_with_indices"](input, output_size)


# -- losses --------------------------------------------------------------------------------------

def kl_div(input, target, reduction=1, *, log_target=False):
    """Pointwise KL divergence, reduced by the int enum: 1 is the mean over every element
    (ATen has no 'batchmean': F divides the sum itself), without F's warning about it."""
    red = _reduction("kl_div", 3, reduction)
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    loss = _F["kl_div_log_target" if log_target else "kl_div"](input, target, log_target)
    return _loss._reduced(loss, red)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    red = _reduction("binary_cross_entropy_with_logits", 5, reduction)
    return _F["binary_cross_entropy_with_logits"](input, target, weight, pos_weight, red)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    # F's checks of the target's and inputs' dims are ATen's
    red = _reduction("cosine_embedding_loss", 5, reduction)
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=red)


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    red = _reduction("hinge_embedding_loss", 4, reduction)
    # target only selects between terms: PyTorch gives it no gradient
    return _loss._reduced(_F["hinge_embedding_loss"](input, target.detach(), margin), red)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    red = _reduction("margin_ranking_loss", 5, reduction)
    return _loss._reduced(_F["margin_ranking_loss"](input1, input2, target, margin), red)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    red = _reduction("poisson_nll_loss", 6, reduction)
    row = "poisson_nll_loss_full" if full else "poisson_nll_loss"
    return _loss._reduced(_F[row](input, target, log_input, full, eps), red)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=1):
    red = _reduction("triplet_margin_loss", 8, reduction)
    _loss_ranking._check_triplet_dims(anchor, positive, negative)  # ATen's check and message
    out = _F["triplet_margin_loss"](anchor, positive, negative, margin, p, eps, swap)
    return _loss._reduced(out, red)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):
    red = _reduction("ctc_loss", 6, reduction)
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, red,
                      zero_infinity)


# -- the rest --------------------------------------------------------------------------------

bilinear = F.bilinear
threshold_ = F.threshold_
