"""Normalization rows (batch_norm, layer_norm, group_norm, instance_norm, local_response_norm,
rms_norm) and the embedding lookups.

Half-precision inputs are normalised in float32 and rounded once at the end, as PyTorch's CPU
kernels do. batch_norm and instance_norm are private rows that also return the updated running
statistics (unbiased variance, momentum); nn.functional writes them into the buffers in place.
The embedding rows are private too: nn.functional checks the indices on the host first (JAX
would clamp an out-of-range index silently) and renormalises rows for max_norm.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes
from ._registry import op

_NN = dict(function=False, method=False, namespace="torch.nn.functional")
_PRIVATE = dict(function=False, method=False)


def _name(dtype) -> str:
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(dtype).name]


def _tensor_type(dtype) -> str:
    return f"torch.{_name(dtype)}Tensor"


def _shape(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _opmath(dtype):
    """The dtype PyTorch's CPU kernels accumulate in: float32 for half types."""
    return jnp.float32 if dtype in (jnp.float16, jnp.bfloat16) else dtype


def _need_float(input, kernel):
    if not jnp.issubdtype(input.dtype, jnp.floating):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_name(input.dtype)}'")


def _check_param_dtypes(input, *params):
    """PyTorch's CPU rule: parameters share the input's dtype, or are all float32 for a
    float16/bfloat16 input."""
    ps = [p for p in params if p is not None]
    dt = input.dtype
    if all(p.dtype == dt for p in ps):
        return
    if dt in (jnp.float16, jnp.bfloat16) and all(p.dtype == jnp.float32 for p in ps):
        return
    if dt == jnp.float64:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")


def _bcast(v, ndim):
    """A per-channel vector shaped to broadcast along dim 1 of an ndim-d tensor."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _affine(y, weight, bias):
    """y * weight + bias per channel (dim 1), in y's dtype."""
    if weight is not None:
        y = y * _bcast(weight.astype(y.dtype), y.ndim)
    if bias is not None:
        y = y + _bcast(bias.astype(y.dtype), y.ndim)
    return y


# -- batch_norm / instance_norm ---------------------------------------------------------------

def _check_numel(what, v, c):
    if v is not None and v.size != c:
        raise RuntimeError(f"{what} should contain {c} elements not {v.size}")


def _bn(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, new running mean, new running var); the statistics are None when not updated."""
    _need_float(input, "batch_norm")
    if input.ndim < 2 and running_mean is None:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    c = input.shape[1] if input.ndim >= 2 else 0
    _check_numel("weight", weight, c)
    _check_numel("bias", bias, c)
    _check_numel("running_mean", running_mean, c)
    _check_numel("running_var", running_var, c)
    _check_param_dtypes(input, weight, bias, running_mean, running_var)
    if not training:
        for what, v in (("running_mean", running_mean), ("running_var", running_var)):
            if v is None:
                raise RuntimeError(f"{what} must be defined in evaluation mode")
    x = input.astype(_opmath(input.dtype))
    axes = (0,) + tuple(range(2, x.ndim))
    new_mean = new_var = None
    if training:
        mean = jnp.mean(x, axis=axes, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)  # biased, to normalise
        if running_mean is not None:
            n = x.size // c
            m = jnp.asarray(momentum, x.dtype)
            stat_mean = lax.stop_gradient(mean.reshape(-1))
            stat_var = lax.stop_gradient(var.reshape(-1)) * (n / max(n - 1, 1))  # unbiased
            new_mean = ((1 - m) * running_mean.astype(x.dtype) + m * stat_mean)
            new_var = ((1 - m) * running_var.astype(x.dtype) + m * stat_var)
            new_mean = new_mean.astype(running_mean.dtype)
            new_var = new_var.astype(running_var.dtype)
    else:
        mean = _bcast(running_mean.astype(x.dtype), x.ndim)
        var = _bcast(running_var.astype(x.dtype), x.ndim)
    y = (x - mean) * lax.rsqrt(var + jnp.asarray(eps, x.dtype))
    return _affine(y, weight, bias).astype(input.dtype), new_mean, new_var


def _with_stats(out, new_mean, new_var):
    return out if new_mean is None else (out, new_mean, new_var)


_BN_FLAGS = dict(tensors=("input", "weight", "bias", "running_mean", "running_var"),
                 scalars=("momentum",), promote="none",
                 needs=("input", "weight", "running_mean", "running_var"), **_PRIVATE)


# PyTorch saves the running statistics after updating them in place (nn.functional's
# batch_norm re-records their versions once it has written them)
@op(grad="NativeBatchNormBackward0",
    saves=("input", "weight", "running_mean", "running_var"), **_BN_FLAGS)
def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Batch normalisation over every dim but 1; in training also the updated running stats."""
    return _with_stats(*_bn(input, weight, bias, running_mean, running_var, training, momentum,
                            eps))


# PyTorch's instance_norm runs batch_norm on a reshaped view of input with repeated copies of
# weight and the statistics, so of the arguments only input is saved
@op(grad="ViewBackward0", saves=("input",), **_BN_FLAGS)
def _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                   eps):
    """Batch normalisation of input seen as (1, N*C, ...), as PyTorch computes instance_norm;
    the running stats are averaged over the batch."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    b = input.shape[0]

    def rep(v):
        return None if v is None else jnp.tile(v, b)

    x = input.reshape((1, -1) + input.shape[2:])
    out, new_mean, new_var = _bn(x, rep(weight), rep(bias), rep(running_mean),
                                 rep(running_var), use_input_stats, momentum, eps)
    out = out.reshape(input.shape)
    if new_mean is None:
        return out

    def avg(v, like):
        return jnp.mean(v.reshape(b, -1).astype(_opmath(v.dtype)), axis=0).astype(like.dtype)

    return out, avg(new_mean, running_mean), avg(new_var, running_var)


# -- layer_norm / rms_norm / group_norm ---------------------------------------------------------

def _normalized_axes(input, normalized_shape, weight, bias, fname, star):
    if isinstance(normalized_shape, int):
        raise TypeError(f"{fname}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not int")
    ns = tuple(normalized_shape)
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for what, v in (("weight", weight), ("bias", bias)):
        if v is not None and tuple(v.shape) != ns:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but got "
                               f"{what} of shape {_shape(v.shape)} and normalized_shape = "
                               f"{_shape(ns)}")
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={_shape(ns)}, expected input with shape "
                           f"[{star}{_shape(ns)[1:]}, but got input of size{_shape(input.shape)}")
    return tuple(range(input.ndim - len(ns), input.ndim))


@op(tensors=("input", "weight", "bias"), promote="none", needs=("input", "weight"),
    grad="NativeLayerNormBackward0", **_NN, saves=("input", "weight", "bias"))
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing normalized_shape dims (biased variance), then scale/shift."""
    axes = _normalized_axes(input, normalized_shape, weight, bias, "layer_norm", "*, ")
    _need_float(input, "LayerNormKernelImpl")
    _check_param_dtypes(input, weight, bias)
    x = input.astype(_opmath(input.dtype))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    y = (x - mean) * lax.rsqrt(var + jnp.asarray(eps, x.dtype))
    if weight is not None:
        y = y * weight.astype(x.dtype)
    if bias is not None:
        y = y + bias.astype(x.dtype)
    return y.astype(input.dtype)


@op(tensors=("input", "weight"), promote="none", grad="MulBackward0", **_NN,
    saves={"input": ("input", "weight")})
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the trailing dims, times weight; eps=None is the machine
    epsilon of the accumulation dtype (float32 for half inputs)."""
    axes = _normalized_axes(input, normalized_shape, weight, None, "rms_norm", "*")
    _need_float(input, "rms_norm")
    ct = _opmath(input.dtype)
    if eps is None:
        eps = float(jnp.finfo(ct).eps)
    x = input.astype(ct)
    y = x * lax.rsqrt(jnp.mean(jnp.square(x), axis=axes, keepdims=True) + jnp.asarray(eps, ct))
    if weight is not None:
        y = y * weight.astype(ct)
    return y.astype(input.dtype)


@op(tensors=("input", "weight", "bias"), promote="none", needs=("input", "weight"),
    grad="NativeGroupNormBackward0", **_NN)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each group of num_groups channel groups per sample, then scale/shift per
    channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[:2]
    per_group = [n * c // num_groups, num_groups, *input.shape[2:]]
    if math.prod(per_group[:1] + per_group[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{per_group}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {_shape(input.shape)} and "
                           f"num_groups={num_groups}")
    # PyTorch's bias message shows the weight's shape ([0] without a weight): kept verbatim
    shown = {"weight": _shape(weight.shape) if weight is not None else "[0]"}
    shown["bias"] = shown["weight"]
    for what, v in (("weight", weight), ("bias", bias)):
        if v is not None and (v.ndim != 1 or v.size != c):
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of "
                               f"channels in input, but got {what} of shape {shown[what]} and "
                               f"input of shape {_shape(input.shape)}")
    _need_float(input, "GroupNormKernelImpl")
    _check_param_dtypes(input, weight, bias)
    x = input.astype(_opmath(input.dtype)).reshape(n, num_groups, -1)
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    y = ((x - mean) * lax.rsqrt(var + jnp.asarray(eps, x.dtype))).reshape(input.shape)
    return _affine(y, weight, bias).astype(input.dtype)


@op(promote="none", grad="DivBackward0", **_NN)
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of squares over `size` neighbouring channels) ** beta, the
    window zero-padded by size // 2 before and (size - 1) // 2 after."""
    if input.ndim < 3:
        # PyTorch's message has this run of spaces in it
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {input.ndim} dimensions)")
    if size <= 0:
        # PyTorch pools with avg_pool2d (3-d input) or avg_pool3d and reports their check
        kernel = f"kH: {size} kW: 1" if input.ndim == 3 else f"kT: {size} kH: 1 kW: 1"
        raise RuntimeError(f"kernel size should be greater than zero, but got {kernel}")
    if input.size == 0:
        return input
    if not jnp.issubdtype(input.dtype, jnp.floating):
        raise NotImplementedError(f"local_response_norm: integer input ({_name(input.dtype)}) "
                                  f"is not supported (PyTorch averages its squares in integer "
                                  f"arithmetic); convert it to a floating dtype first")
    sq = jnp.square(input)
    pad = [(0, 0)] * input.ndim
    pad[1] = (size // 2, (size - 1) // 2)
    window = [1] * input.ndim
    window[1] = size
    sums = lax.reduce_window(jnp.pad(sq, pad), np.zeros((), sq.dtype), lax.add,
                             tuple(window), (1,) * input.ndim, "VALID")
    div = (sums / size * alpha + k) ** beta
    return input / div.astype(input.dtype)


# -- embedding ----------------------------------------------------------------------------------

def _check_indices(indices, fname):
    if indices.dtype not in (jnp.int64, jnp.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{_tensor_type(indices.dtype)} instead (while checking arguments for "
                           f"{fname})")


def _index_counts(indices, num):
    return jnp.zeros((num,), jnp.int32).at[indices.reshape(-1)].add(1)


def _grad_scaled(rows, divisor):
    """rows whose gradient is divided by `divisor` (one per row); the values stay exactly rows,
    the scaling touches only the gradient path."""
    still = lax.stop_gradient(rows)
    return still + (rows - still) / divisor[..., None].astype(rows.dtype)


@op(tensors=("weight", "indices"), promote="none", needs=("indices",),
    grad="EmbeddingBackward0", **_PRIVATE)
def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False):
    """The rows of weight at indices; the padding_idx row gets no gradient. nn.functional has
    checked the index range on the host ("fill" makes a traced out-of-range index NaN, never
    another row)."""
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(indices, "embedding")
    rows = jnp.take(weight, indices, axis=0, mode="fill")
    if not jnp.issubdtype(weight.dtype, jnp.inexact):
        return rows
    if scale_grad_by_freq:
        rows = _grad_scaled(rows, _index_counts(indices, weight.shape[0])[indices])
    if padding_idx >= 0:
        rows = jnp.where((indices == padding_idx)[..., None], lax.stop_gradient(rows), rows)
    return rows


@op(    tensors=("weight", "indices", "offsets", "per_sample_weights"), promote="none",
    grad="EmbeddingBagBackward0", **_PRIVATE,
    saves={"weight": ("indices", "offsets", "per_sample_weights"),
           "per_sample_weights": ("weight", "indices", "offsets")})
def _embedding_bag(weight, indices, offsets, per_sample_weights=None, scale_grad_by_freq=False,
                   mode="mean", include_last_offset=False, padding_idx=None):
    """Sum, mean or max of the weight rows of each bag (indices[offsets[i]:offsets[i+1]]);
    padding_idx entries are left out, an empty bag gives zeros. In max mode the gradient goes
    to the first position holding each maximum, as in PyTorch."""
    if not jnp.issubdtype(weight.dtype, jnp.floating):
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the "
                           f"following scalar types: Half, BFloat16, Float, Double; but got "
                           f"{_tensor_type(weight.dtype)} instead (while checking arguments for "
                           f"embedding_bag)")
    _check_indices(indices, "embedding_bag")
    _check_indices(offsets, "embedding_bag")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as "
                           f"tensor for argument #1 'per_sample_weights'; but type "
                           f"{_tensor_type(weight.dtype)} does not equal "
                           f"{_tensor_type(per_sample_weights.dtype)} (while checking arguments "
                           f"for embedding_bag)")
    n_bags = offsets.shape[0] - (1 if include_last_offset else 0)
    length = indices.shape[0]
    if length == 0:
        return jnp.zeros((n_bags, weight.shape[1]), weight.dtype)
    # bag of each position: count the bag starts at or before it (empty bags repeat a start)
    starts = jnp.zeros((length + 1,), jnp.int32).at[offsets[:n_bags]].add(1)
    bag = jnp.cumsum(starts[:length]) - 1
    valid = bag >= 0
    if include_last_offset:
        valid = valid & (jnp.arange(length) < offsets[-1])
    if padding_idx is not None:
        valid = valid & (indices != padding_idx)
    bag = jnp.where(valid, bag, 0)
    rows = jnp.take(weight, indices, axis=0, mode="fill")
    if scale_grad_by_freq:
        rows = _grad_scaled(rows, _bag_freq_divisor(indices, weight.shape[0]))
    if mode == "max":
        return _bag_max(weight, indices, rows, bag, valid, n_bags)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    rows = jnp.where(valid[:, None], rows, 0)
    out = jax.ops.segment_sum(rows, bag, num_segments=n_bags)
    if mode == "mean":
        count = jax.ops.segment_sum(valid.astype(jnp.int32), bag, num_segments=n_bags)
        out = out / jnp.maximum(count, 1).astype(out.dtype)[:, None]
    return out


def _bag_freq_divisor(indices, num):
    """The divisor PyTorch's CPU embedding_bag backward applies with scale_grad_by_freq: for
    the k-th smallest distinct index it takes the count of sorted(indices)[k] (not of that
    index itself, a quirk of its kernel), which is what users of PyTorch train with."""
    counts = _index_counts(indices, num)
    rank = jnp.cumsum(counts > 0) - 1  # of each index among the distinct indices, ascending
    return counts[jnp.sort(indices)[rank[indices]]]


def _bag_max(weight, indices, rows, bag, valid, n_bags):
    low = jnp.asarray(-jnp.inf, rows.dtype)
    masked = jnp.where(valid[:, None], rows, low)
    best = jax.ops.segment_max(lax.stop_gradient(masked), bag, num_segments=n_bags)
    length = rows.shape[0]
    pos = jnp.broadcast_to(jnp.arange(length)[:, None], rows.shape)
    hit = valid[:, None] & (masked == best[bag])
    first = jax.ops.segment_min(jnp.where(hit, pos, length), bag, num_segments=n_bags)
    found = first < length
    # out[b, d] = weight[indices[first[b, d]], d]: a gather whose gradient reaches one element
    which = indices[jnp.where(found, first, 0)]
    out = jnp.take_along_axis(weight, which, axis=0)
    return jnp.where(found, out, jnp.zeros((), weight.dtype))
