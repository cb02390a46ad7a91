"""Loss rows behind torchjax.nn.functional.

The public functions (argument checks, the deprecated size_average/reduce, routing) are the
composites in nn/_functional/loss.py; the rows here are internal and each is one tape node.
Where PyTorch computes a loss in one kernel (mse_loss, nll_loss, binary_cross_entropy, ...)
the row takes `reduction` and carries that kernel's grad_fn name. Where PyTorch composes it from
elementwise ops (l1_loss, kl_div, hinge_embedding_loss, ...) the row returns the unreduced loss
named after PyTorch's last elementwise step, and the composite reduces it with mean/sum, so the
grad_fn chain reads as PyTorch's does (MeanBackward0 over AbsBackward0).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax

from ._registry import op
from .activation import _need_float, _type_name
from .vision import pairwise_distance

_ROW = dict(function=False, method=False)
_EPSILON = 1e-12  # PyTorch's guard in cosine_embedding_loss and binary_cross_entropy


def _reduce(loss, reduction):
    if reduction == "mean":
        return jnp.mean(loss)
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


def _clamp_min0(z):
    """max(z, 0) with clamp_min's gradient: 1 at z == 0 as well."""
    return jnp.where(z >= 0, z, jnp.zeros_like(z))


def _hinge(z):
    """max(z, 0) with the margin kernels' gradient: 0 at z == 0."""
    return jnp.where(z > 0, z, jnp.zeros_like(z))


def _rows(fn, variants, **flags):
    """Register fn once per (row, grad_fn name[, flags of that row only]): PyTorch names the
    result after its last step, which depends on the arguments (label smoothing ends
    cross_entropy with an addition), and what it saves may depend on them too."""
    for name, grad, *own in variants:
        op(name=name, grad=grad, **flags, **(own[0] if own else {}))(fn)


# -- regression losses ------------------------------------------------------------------------

@op(tensors=("input", "target"), grad="MseLossBackward0", **_ROW)
def mse_loss(input, target, reduction="mean"):
    """(input - target) ** 2, reduced."""
    _need_float(input, "mse_cpu")
    return _reduce(jnp.square(input - target), reduction)


@op(tensors=("input", "target"), grad="AbsBackward0", **_ROW, saves=())
def l1_loss(input, target):
    """|input - target|, unreduced; its gradient is sgn (0 where input == target)."""
    d = input - target
    if jnp.iscomplexobj(d):
        return jnp.abs(d)
    return d * lax.stop_gradient(jnp.sign(d))


@op(tensors=("input", "target"), grad="SmoothL1LossBackward0", **_ROW)
def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target), reduced."""
    _need_float(input, "smooth_l1_cpu")
    d = jnp.abs(input - target)
    return _reduce(jnp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


@op(tensors=("input", "target"), promote="none", grad="HuberLossBackward0", **_ROW)
def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta), in input's dtype, reduced."""
    _need_float(input, "huber_cpu")
    d = jnp.abs(input - target.astype(input.dtype))
    return _reduce(jnp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


# -- classification losses over class indices -------------------------------------------------

def _nll(input, target, weight, reduction, ignore_index):
    """-input[target] * weight[target] over the class dim (1, or 0 for unbatched input), with
    ignore_index skipped; mean divides by the total weight of the targets it kept."""
    cdim = 1 if input.ndim > 1 else 0
    if input.ndim == 1:
        target = target.reshape(())
    target = target.astype(jnp.int64)
    keep = target != ignore_index
    safe = jnp.where(keep, target, 0)
    picked = jnp.squeeze(jnp.take_along_axis(input, jnp.expand_dims(safe, cdim), axis=cdim), cdim)
    w = jnp.ones((), input.dtype) if weight is None else weight[safe]
    w = jnp.where(keep, w, 0).astype(input.dtype)
    loss = -picked * w
    if reduction == "none":
        return loss
    total = jnp.sum(loss)
    if reduction == "sum":
        return total
    wsum = jnp.sum(w)
    # 0 / 0 (nothing kept) is nan, as in PyTorch, with a zero gradient rather than nan
    empty = wsum == 0
    return jnp.where(empty, jnp.nan, total / jnp.where(empty, 1, wsum)).astype(input.dtype)


def nll_loss(input, target, weight=None, reduction="mean", ignore_index=-100):
    """Negative log-likelihood of log-probabilities over the class dim (1, or 0 unbatched)."""
    return _nll(input, target, weight, reduction, ignore_index)


_rows(nll_loss, (("nll_loss", "NllLossBackward0"), ("nll_loss2d", "NllLoss2DBackward0")),
      tensors=("input", "target", "weight"), promote="none", **_ROW)


def _class_view(weight, ndim, cdim):
    """weight (C,) shaped to broadcast along the class dim of an ndim-d input."""
    return weight.reshape((-1,) + (1,) * (ndim - cdim - 1))


def cross_entropy(input, target, weight=None, reduction="mean", ignore_index=-100,
                  label_smoothing=0.0):
    """log_softmax over the class dim, then nll_loss; label smoothing mixes in the mean
    negative log-probability over all classes."""
    cdim = 1 if input.ndim > 1 else 0
    logp = jax.nn.log_softmax(input, axis=cdim)
    nll = _nll(logp, target, weight, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    n_classes = input.shape[cdim]
    target = target.astype(jnp.int64)
    if input.ndim == 1:
        target = target.reshape(())
    w = None if weight is None else _class_view(weight, input.ndim, cdim)
    smooth = -jnp.sum(logp if w is None else logp * w, axis=cdim)
    keep = target != ignore_index
    smooth = jnp.where(keep, smooth, 0)
    if reduction == "mean":
        kept = keep if weight is None else jnp.where(keep, weight[jnp.where(keep, target, 0)], 0)
        smooth = jnp.sum(smooth) / jnp.sum(kept)
    else:
        smooth = _reduce(smooth, reduction)
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)


# log_softmax saves its own result, nll_loss the target and weight: nothing of input
_rows(cross_entropy, (("cross_entropy", "NllLossBackward0"),
                      ("cross_entropy_2d", "NllLoss2DBackward0"),
                      ("cross_entropy_smoothed", "AddBackward0")),
      tensors=("input", "target", "weight"), promote="none",
      saves={"input": ("target", "weight")}, **_ROW)


def cross_entropy_probs(input, target, weight=None, reduction="mean", label_smoothing=0.0):
    """Cross entropy against class probabilities: -sum(target * log_softmax(input)) over the
    class dim; mean divides by the number of samples (all positions but the class dim)."""
    cdim = 1 if input.ndim > 1 else 0
    n_classes = input.shape[cdim]
    logp = jax.nn.log_softmax(input, axis=cdim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_view(weight, input.ndim, cdim)
    if reduction == "none":
        return -jnp.sum(prod, axis=cdim)
    total = -jnp.sum(prod)
    if reduction == "sum":
        return total
    if input.size == 0:
        return jnp.full((), jnp.nan, total.dtype)
    return total / (input.size // n_classes)


def _probs_saves(label_smoothing=0.0, **_):
    # (logp * target) * weight; label smoothing first makes a smoothed copy of target
    return _SMOOTHED_PROBS_SAVES if label_smoothing > 0 else _PROBS_SAVES


_PROBS_SAVES = {"input": ("target",), ("input", "target"): ("weight",)}
_SMOOTHED_PROBS_SAVES = {("input", "target"): ("weight",)}
_rows(cross_entropy_probs, (("cross_entropy_probs", "NegBackward0"),
                            ("cross_entropy_probs_mean", "DivBackward1")),
      tensors=("input", "target", "weight"), promote="none", saves=_probs_saves, **_ROW)


@op(tensors=("input", "target", "weight"), promote="none", grad="MultiMarginLossBackward0",
    **_ROW)
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, reduction="mean"):
    """Per sample: sum over classes i != y of max(0, margin - x[y] + x[i]) ** p * weight[y],
    divided by the number of classes; 'none' has target's shape."""
    _need_float(input, "multi_margin_loss_cpu_kernel")
    x = input.reshape((-1, input.shape[-1] if input.ndim else 1))
    y = target.reshape(-1).astype(jnp.int64)
    n_classes = x.shape[1]
    xy = jnp.take_along_axis(x, y[:, None], axis=1)
    z = _hinge(margin - xy + x)
    h = z if p == 1 else z * z
    if weight is not None:
        h = h * weight[y][:, None]
    h = jnp.where(jnp.arange(n_classes)[None, :] == y[:, None], 0, h)
    loss = (jnp.sum(h, axis=1) / n_classes).reshape(target.shape)
    return _reduce(loss, reduction)


@op(tensors=("input", "target"), promote="none", grad="MultilabelMarginLossBackward0", **_ROW)
def multilabel_margin_loss(input, target, reduction="mean"):
    """Per sample: sum over the target classes j (listed before the first -1) and the other
    classes i of max(0, 1 - (x[j] - x[i])), divided by the number of classes."""
    _need_float(input, "multilabel_margin_loss_forward_out_frame")
    c = input.shape[-1] if input.ndim else 1
    x = input.reshape((-1, c))
    t = target.reshape((-1, c)).astype(jnp.int64)
    listed = jnp.cumprod(t != -1, axis=1).astype(bool)   # positions before the first -1
    safe = jnp.where(listed, t, 0)
    classes = jnp.arange(c)
    is_target = jnp.any(listed[:, :, None] & (safe[:, :, None] == classes), axis=1)
    xt = jnp.take_along_axis(x, safe, axis=1)
    z = _hinge(1 - xt[:, :, None] + x[:, None, :])
    z = jnp.where(listed[:, :, None] & ~is_target[:, None, :], z, 0)
    loss = jnp.sum(z, axis=(1, 2)) / c
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


# -- binary and probabilistic losses ----------------------------------------------------------

@jax.custom_vjp
def _bce(x, t):
    one = jnp.ones((), x.dtype)
    return (t - one) * jnp.maximum(jnp.log1p(-x), -100) - t * jnp.maximum(jnp.log(x), -100)


def _bce_fwd(x, t):
    return _bce(x, t), (x, t)


def _bce_bwd(res, ct):
    # PyTorch's derivatives: (x - t) / max(x (1 - x), eps) for the input, and the unclamped
    # -logit(x) for the target (the clamped logs are not differentiated)
    x, t = res
    gx = ct * (x - t) / jnp.maximum((1 - x) * x, jnp.asarray(_EPSILON, x.dtype))
    gt = ct * (jnp.log1p(-x) - jnp.log(x))
    return gx, gt


_bce.defvjp(_bce_fwd, _bce_bwd)


@op(tensors=("input", "target", "weight"), promote="none", grad="BinaryCrossEntropyBackward0",
    **_ROW)
def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)) with each log clamped at -100, times weight, reduced."""
    _need_float(input, "binary_cross_entropy")
    loss = _bce(input, target)
    if weight is not None:
        loss = loss * weight.astype(loss.dtype)
    return _reduce(loss, reduction)


@op(tensors=("input", "target", "weight", "pos_weight"), promote="none",
    grad="BinaryCrossEntropyWithLogitsBackward0", **_ROW)
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction="mean"):
    """(1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x), times weight, reduced; computed in
    target's dtype as PyTorch does."""
    dt = target.dtype
    if not jnp.issubdtype(dt, jnp.inexact):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_type_name(dt)}")
    x = input.astype(dt)
    log_sig = jax.nn.log_sigmoid(x)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight.astype(dt) - 1) * target + 1)
    loss = (1 - target) * x - log_sig
    if weight is not None:
        loss = loss * weight.astype(dt)
    return _reduce(loss, reduction)


def kl_div(input, target, log_target=False):
    """Pointwise KL divergence: target (log target - input), or exp(t) (t - input) when the
    target is given as log-probabilities; unreduced."""
    if log_target:
        return jnp.exp(target) * (target - input)
    return jax.scipy.special.xlogy(target, target) - target * input


_rows(kl_div, (("kl_div", "SubBackward0", {"saves": {"input": ("target",),
                                                      "target": ("input", "target")}}),
               ("kl_div_log_target", "MulBackward0", {"saves": ()})),
      tensors=("input", "target"), **_ROW)


def poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8):
    """exp(input) - target input (or input - target log(input + eps)), plus Stirling's
    approximation of log(target!) where target > 1 when full; unreduced."""
    if log_input:
        loss = jnp.exp(input) - target * input
    else:
        loss = input - target * jnp.log(input + eps)
    if full:
        stirling = target * jnp.log(target) - target + 0.5 * jnp.log(2 * math.pi * target)
        loss = loss + jnp.where(target > 1, stirling, 0)
    return loss


_rows(poisson_nll_loss, (("poisson_nll_loss", "SubBackward0"),
                         ("poisson_nll_loss_full", "AddBackward0")),
      tensors=("input", "target"), promote="float",
      saves={"input": ("target",), "target": ("input",)}, **_ROW)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6):
    """0.5 (log var + (input - target)**2 / var), var clamped below at eps (a clamp the
    gradient does not see, as PyTorch clamps under no_grad); unreduced."""
    v = var + lax.stop_gradient(jnp.maximum(var, eps) - var)
    loss = 0.5 * (jnp.log(v) + jnp.square(input - target) / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return loss


_rows(gaussian_nll_loss, (("gaussian_nll_loss", "MulBackward0"),
                          ("gaussian_nll_loss_full", "AddBackward0")),
      tensors=("input", "target", "var"), saves=(), **_ROW)


@op(tensors=("input", "target", "weight"), grad="DivBackward0", **_ROW,
    saves={"input": ("input", "target")})
def multilabel_soft_margin_loss(input, target, weight=None):
    """Per sample: the mean over classes of -(t log_sigmoid(x) + (1 - t) log_sigmoid(-x)),
    each class times weight; unreduced."""
    loss = -(target * jax.nn.log_sigmoid(input) + (1 - target) * jax.nn.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return jnp.sum(loss, axis=-1) / input.shape[-1]


@op(tensors=("input", "target"), promote="none", grad="SoftMarginLossBackward0", **_ROW)
def soft_margin_loss(input, target, reduction="mean"):
    """log(1 + exp(-target input)), in input's dtype, reduced."""
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_type_name(input.dtype)}")
    return _reduce(jnp.log1p(jnp.exp(-target.astype(input.dtype) * input)), reduction)


# -- embedding and ranking losses -------------------------------------------------------------

@op(tensors=("input", "target"), promote="none", grad="AddBackward0", **_ROW, saves=())
def hinge_embedding_loss(input, target, margin=1.0):
    """max(0, margin - x) where target != 1, plus x where target != -1; unreduced."""
    pulled = jnp.where(target != 1, _clamp_min0(margin - input), 0)
    return pulled + jnp.where(target != -1, input, 0)


@op(tensors=("input1", "input2", "target"), promote="float", promote_args=("input1", "input2"),
    grad="AddBackward0", **_ROW, saves=("input1", "input2"))
def cosine_embedding_loss(input1, input2, target, margin=0.0):
    """1 - cos(x1, x2) where target == 1, max(0, cos - margin) where target == -1; the cosine
    runs over dim 1 (dim 0 for a 0-d target); unreduced."""
    d = target.ndim
    prod = jnp.sum(input1 * input2, axis=d)
    m1 = jnp.sum(input1 * input1, axis=d) + _EPSILON
    m2 = jnp.sum(input2 * input2, axis=d) + _EPSILON
    cos = prod / jnp.sqrt(m1 * m2)
    pos = jnp.where(target == 1, 1 - cos, 0)
    return pos + jnp.where(target == -1, _clamp_min0(cos - margin), 0)


@op(tensors=("input1", "input2", "target"), promote="float", grad="ClampMinBackward0", **_ROW,
    saves=())
def margin_ranking_loss(input1, input2, target, margin=0.0):
    """max(0, -target (input1 - input2) + margin); unreduced."""
    return _clamp_min0(-target * (input1 - input2) + margin)


@op(tensors=("anchor", "positive", "negative"), promote="float", grad="ClampMinBackward0",
    **_ROW, saves=())
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False):
    """max(0, margin + d(a, p) - d(a, n)) with d the p-norm distance over the last dim (swap:
    d(a, n) becomes min(d(a, n), d(p, n))); unreduced."""
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = jnp.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _clamp_min0(margin + d_pos - d_neg)


# -- connectionist temporal classification ----------------------------------------------------

def _logsumexp3(a, b, c):
    """log(exp a + exp b + exp c), -inf (with zero gradients) where all three are -inf."""
    m = lax.stop_gradient(jnp.maximum(jnp.maximum(a, b), c))
    live = m > -jnp.inf
    m = jnp.where(live, m, 0)
    s = jnp.exp(a - m) + jnp.exp(b - m) + jnp.exp(c - m)
    return jnp.where(live, jnp.log(jnp.where(live, s, 1)) + m, -jnp.inf)


def _shift(x, k):
    """x[..., s - k] along the last dim, -inf where that falls outside (k < 0: s + |k|)."""
    pad = jnp.full(x.shape[:-1] + (abs(k),), -jnp.inf, x.dtype)
    if k > 0:
        return jnp.concatenate([pad, x[..., :-k]], axis=-1)
    return jnp.concatenate([x[..., -k:], pad], axis=-1)


def _ctc_lattice(log_probs, targets, blank):
    """The states of CTC's alignment lattice: the target with blanks around and between its
    labels. Returns each state's label (N, L), its log-probability at each time (T, N, L), and
    whether a path may reach it from two states back (skipping a blank between two different
    labels)."""
    n, s = targets.shape
    ext = jnp.full((n, 2 * s + 1), blank, targets.dtype).at[:, 1::2].set(targets)
    skip = (jnp.arange(2 * s + 1) >= 2) & (ext != jnp.roll(ext, 2, axis=1))
    lp = jnp.take_along_axis(log_probs, jnp.broadcast_to(ext, (log_probs.shape[0],) + ext.shape),
                             axis=2)
    return ext, lp, skip


def _ctc_alpha(lp, skip, input_lengths, target_lengths):
    """Forward variables (T, N, L): log-probability of the alignment prefixes ending in each
    state; held at their last value past each input length."""
    idx = jnp.arange(lp.shape[2])
    first = (idx == 0) | ((idx == 1) & (target_lengths[:, None] > 0))
    alpha0 = jnp.where(first, lp[0], -jnp.inf)

    def step(alpha, xs):
        t, lpt = xs
        new = _logsumexp3(alpha, _shift(alpha, 1), jnp.where(skip, _shift(alpha, 2), -jnp.inf))
        alpha = jnp.where((t < input_lengths)[:, None], new + lpt, alpha)
        return alpha, alpha

    _, rest = lax.scan(step, alpha0, (jnp.arange(1, lp.shape[0]), lp[1:]))
    return jnp.concatenate([alpha0[None], rest])


def _ctc_beta(lp, skip, input_lengths, target_lengths):
    """Backward variables (T, N, L): log-probability of the alignment suffixes starting in each
    state (including its own label), -inf past each input length."""
    end = 2 * target_lengths[:, None]
    idx = jnp.arange(lp.shape[2])
    final = (idx == end) | ((idx == end - 1) & (end > 0))
    skip_up = jnp.concatenate([skip[:, 2:], jnp.zeros_like(skip[:, :2])], axis=1)

    def step(beta, xs):
        t, lpt = xs
        rec = _logsumexp3(beta, _shift(beta, -1), jnp.where(skip_up, _shift(beta, -2), -jnp.inf))
        last = (t == input_lengths - 1)[:, None]
        beta = jnp.where(last, jnp.where(final, lpt, -jnp.inf),
                         jnp.where((t < input_lengths - 1)[:, None], rec + lpt, -jnp.inf))
        return beta, beta

    beta0 = jnp.full(lp.shape[1:], -jnp.inf, lp.dtype)
    _, betas = lax.scan(step, beta0, (jnp.arange(lp.shape[0]), lp), reverse=True)
    return betas


def _ctc_nll(alpha, input_lengths, target_lengths):
    """-log p(target) from the forward variables at the last time."""
    end = 2 * target_lengths[:, None]
    last = jnp.take_along_axis(alpha[-1], end, axis=1)[:, 0]
    before = jnp.take_along_axis(alpha[-1], jnp.maximum(end - 1, 0), axis=1)[:, 0]
    nll = -jnp.logaddexp(last, jnp.where(target_lengths > 0, before, -jnp.inf))
    # no input: only the empty target is possible
    empty = jnp.where(target_lengths == 0, 0, jnp.inf).astype(nll.dtype)
    return jnp.where(input_lengths == 0, empty, nll)


@functools.partial(jax.custom_vjp, nondiff_argnums=(4, 5))
def _ctc(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    return _ctc_fwd(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)[0]


def _ctc_fwd(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    ext, lp, skip = _ctc_lattice(log_probs, targets, blank)
    alpha = _ctc_alpha(lp, skip, input_lengths, target_lengths)
    nll = _ctc_nll(alpha, input_lengths, target_lengths)
    return nll, (log_probs, ext, lp, skip, alpha, input_lengths, target_lengths, nll)


def _ctc_bwd(blank, zero_infinity, res, ct):
    # PyTorch's CTC gradient: exp(log_probs) minus each label's posterior probability (the
    # derivative with respect to logits under a log_softmax, not the one with respect to
    # log_probs), times the incoming gradient, at times within the input length (0 after).
    # An impossible alignment (infinite loss) gives nan there, or 0 with zero_infinity.
    log_probs, ext, lp, skip, alpha, input_lengths, target_lengths, nll = res
    both = alpha + _ctc_beta(lp, skip, input_lengths, target_lengths)
    # the probability of passing through each state (alpha and beta both hold its lp)
    occupancy = jnp.where(both > -jnp.inf, jnp.exp(both - lp + nll[None, :, None]), 0)
    n = jnp.arange(ext.shape[0])[:, None]
    posterior = jnp.zeros_like(log_probs).at[:, n, ext].add(occupancy)
    within = (jnp.arange(log_probs.shape[0])[:, None] < input_lengths[None, :])[:, :, None]
    g = jnp.where(within, ct[None, :, None] * (jnp.exp(log_probs) - posterior), 0)
    # PyTorch divides by the label's probability: a zero one (log_probs -inf) gives nan
    g = jnp.where(within & (log_probs == -jnp.inf), jnp.nan, g)
    impossible = jnp.where(within & (not zero_infinity), jnp.nan, 0)
    return jnp.where(jnp.isinf(nll)[None, :, None], impossible, g), None, None, None


_ctc.defvjp(_ctc_fwd, _ctc_bwd)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    """Per-sample CTC negative log-likelihood of padded targets (N, S) given log_probs (T, N, C);
    unreduced. zero_infinity replaces impossible alignments' infinite loss (and its nan
    gradient) by 0."""
    _need_float(log_probs, "ctc_loss_cpu")
    nll = _ctc(log_probs, targets.astype(jnp.int64), input_lengths.astype(jnp.int64),
               target_lengths.astype(jnp.int64), blank, zero_infinity)
    if zero_infinity:
        nll = jnp.where(jnp.isinf(nll), 0, nll)
    return nll


_rows(ctc_loss, (("ctc_loss", "CtcLossBackward0"), ("ctc_loss_zero_infinity", "WhereBackward0")),
      tensors=("log_probs", "targets", "input_lengths", "target_lengths"), promote="none",
      saves=("log_probs", "targets"), **_ROW)
