"""nn.functional normalization, dropout and embedding functions that are not single rows of the
op table: they update buffers in place (batch_norm, instance_norm running statistics, the rows
embedding renormalises for max_norm), draw random masks (dropout) or check values on the host.

layer_norm, group_norm, rms_norm and local_response_norm are rows (_ops/normalization.py) and
reach torch.nn.functional directly.
"""

from __future__ import annotations

import functools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtypes, _programs
from ..._autograd.grad_mode import no_grad
from ..._dispatch import FUNCTIONS as _F
from ..._tensor import Tensor
from ..._x64 import scoped

__all__ = ["batch_norm", "instance_norm", "embedding", "embedding_bag"]


# -- batch_norm / instance_norm ------------------------------------------------------------------

def _verify_batch_size(size) -> None:
    if math.prod(size[:1]) * math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def _verify_spatial_size(size) -> None:
    if math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{size}")


def _check_stats_pair(running_mean, running_var) -> None:
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")


def _store_stats(result, running_mean, running_var, kernel: bool) -> Tensor:
    """The row's output; its updated running statistics are written into the buffers given.

    As PyTorch, a module called twice before one backward (a siamese network's two
    branches, a GAN's discriminator on real and fake) must not find the first call's
    statistics "modified by an inplace operation". batch_norm (`kernel`) writes them as
    PyTorch's kernel does, keeping their versions (its schema does not mark them mutated);
    instance_norm's are copied in (one version each, as PyTorch's Python copy_), and its
    backward does not read them."""
    if not isinstance(result, tuple):
        return result
    out, new_mean, new_var = result
    with no_grad():
        for buf, new in ((running_mean, new_mean), (running_var, new_var)):
            counter = buf._counter()
            version = counter[0]
            buf._write(new._data)
            if kernel:
                counter[0] = version
    node = out._grad_fn
    if not kernel and node is not None and node._versions:
        counters = {id(running_mean._counter()), id(running_var._counter())}
        node._versions = tuple(v for v in node._versions if id(v[0]) not in counters)
    return out


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise over every dim but 1. In training, with running statistics given, they are
    updated in place: (1 - momentum) * running + momentum * batch (unbiased variance)."""
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if training:
        _check_stats_pair(running_mean, running_var)
    res = _F["_batch_norm"](input, weight, bias, running_mean, running_var, bool(training),
                            momentum, eps)
    return _store_stats(res, running_mean, running_var, kernel=True)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) over its spatial dims; running statistics given are
    updated in place with the batch average of the per-instance statistics."""
    if use_input_stats:
        _verify_spatial_size(input.size())
        _check_stats_pair(running_mean, running_var)
    res = _F["_instance_norm"](input, weight, bias, running_mean, running_var,
                               bool(use_input_stats), momentum, eps)
    return _store_stats(res, running_mean, running_var, kernel=False)


# -- embedding --------------------------------------------------------------------------------------

_INDEX_TYPES = (_dtypes.int64, _dtypes.int32)


def _any_outside_of(indices, n):
    return jnp.any((indices < 0) | (indices >= n))


_any_outside = _programs.lazy_jit(_any_outside_of)
_HOST_CHECK = 1 << 16  # indices


@scoped  # int64 indices
def _check_index_range(indices: Tensor, n: int, error) -> None:
    """Raise error(position, value) for the first index outside [0, n): JAX would clamp it
    silently. Skipped while tracing (no concrete values); the rows then read NaN there."""
    arr = indices._data
    if indices.dtype not in _INDEX_TYPES or arr.size == 0 or isinstance(arr, jax.core.Tracer):
        return
    # a batch of token ids is checked on the host: reading it back costs about what reading
    # back the device check's bool does, and no program is compiled per index shape (one
    # was, 50-80 ms of XLA at a model's first step)
    if arr.size > _HOST_CHECK and not bool(_any_outside(arr, n)):
        return
    flat = np.asarray(arr).reshape(-1)
    bad = (flat < 0) | (flat >= n)
    if bad.any():
        pos = int(np.argmax(bad))
        raise error(pos, int(flat[pos]))


@functools.partial(jax.jit, static_argnums=3)
def _renormed(weight, indices, max_norm, norm_type):
    """weight with each row that indices reference and whose norm exceeds max_norm scaled by
    max_norm / (norm + 1e-7); other rows unchanged, bit for bit."""
    hit = jnp.zeros(weight.shape[0], bool).at[indices.reshape(-1)].set(True)
    w = weight.astype(jnp.promote_types(weight.dtype, jnp.float32))
    norms = jnp.linalg.norm(w, ord=norm_type, axis=1)
    shrink = hit & (norms > max_norm)
    scaled = (w * (max_norm / (norms + 1e-7))[:, None]).astype(weight.dtype)
    return jnp.where(shrink[:, None], scaled, weight)


@jax.custom_vjp
def _untracked(new, old):
    """new's values, with the gradient passing to old unchanged."""
    return new


_untracked.defvjp(lambda new, old: (new, None), lambda _, ct: (None, ct))


@scoped  # a float64 weight stays float64
def _renorm_(weight: Tensor, indices: Tensor, max_norm, norm_type) -> None:
    """PyTorch's embedding_renorm_: rescale the looked-up rows of weight in place, untracked."""
    with no_grad():
        new = _renormed(weight._data, indices._data, float(max_norm), float(norm_type))
        if isinstance(new, jax.core.Tracer):
            # In a compiled function JAX may differentiate the whole program (a compiled
            # forward called with grad): the renorm must stay invisible to it as it is to the
            # tape, where the gradient reaches weight as if its new values had been there all
            # along.
            new = _untracked(new, weight._data)
        weight._write(new)


def _sparse_unsupported(fname: str):
    return NotImplementedError(f"{fname}(sparse=True): torchjax has no sparse gradients; use "
                               f"sparse=False (the weight then gets a dense gradient)")


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """The rows of weight at the indices in input. padding_idx's row gets no gradient; with
    max_norm the rows looked up are first renormalised in place."""
    if not isinstance(input, Tensor):
        raise TypeError(f"embedding(): argument 'indices' (position 2) must be Tensor, not "
                        f"{type(input).__name__}")
    n = weight.size(0)
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= n:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    if sparse:
        raise _sparse_unsupported("embedding")
    _check_index_range(input, n, lambda pos, v: IndexError("index out of range in self"))
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    return _F["_embedding"](weight, input, padding_idx, bool(scale_grad_by_freq))


_BAG_INDEX_ERROR = ("Expected i < index_size to be true, but got false.  (Could this error "
                    "message be improved?  If so, please report an enhancement request to "
                    "PyTorch.)")


def _bag_fast_path(weight: Tensor, mode: str, padding_idx) -> bool:
    """Whether PyTorch's CPU kernel takes its fast path, which words index errors its own way."""
    return (weight.dtype in (_dtypes.float32, _dtypes.float16, _dtypes.bfloat16)
            and mode != "max" and padding_idx is None)


def _bag_index_error(n: int, fast: bool, pos: int, value: int) -> RuntimeError:
    if fast:
        return RuntimeError(f"Index {pos} of input takes value {value} which is not in the valid "
                            f"range [0, {n})")
    return RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx "
                        f"to be {value}")


@scoped  # int64 offsets
def _bag_inputs(input, weight, offsets, per_sample_weights, include_last_offset):
    """PyTorch's argument rules: a 2-d input is a batch of equal bags (offsets must be None)."""
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            kind = "<class 'torch.Tensor'>" if isinstance(offsets, Tensor) else str(type(offsets))
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is "
                             "a mini-batch of fixed length sequences. However, found offsets of "
                             f"type {kind}")
        b, length = input.shape
        if length == 0:
            raise RuntimeError("step must be nonzero")  # PyTorch's arange(0, numel, 0)
        offsets = Tensor._wrap(jnp.arange(0, b * length, length, dtype=input._data.dtype))
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        return input, offsets, per_sample_weights, False
    if input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return input, offsets, per_sample_weights, include_last_offset
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                     f"{input.dim()}")


def _check_offsets(offsets: Tensor, length: int, include_last_offset: bool, mode: str) -> None:
    """The offset checks PyTorch makes on the host."""
    if offsets.dtype not in _INDEX_TYPES or isinstance(offsets._data, jax.core.Tracer):
        return
    off = np.asarray(offsets._data)
    if off.size == 0:
        return
    if off[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {off[0]}")
    if off[-1] > length:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {length} but got "
                           f"offsets[-1] of {off[-1]}")
    if np.any(np.diff(off) < 0):
        raise RuntimeError(_BAG_INDEX_ERROR)
    if include_last_offset and off[-1] < length and mode != "sum":
        # PyTorch leaves those positions out of the sums yet counts them in the mean and max
        raise NotImplementedError(f"embedding_bag(mode='{mode}', include_last_offset=True) with "
                                  f"indices past offsets[-1] ({off[-1]} < {length}) is not "
                                  f"supported")


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sum, mean or max of the embeddings in each bag, without building the looked-up rows
    per bag."""
    if weight.dtype == _dtypes.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    input, offsets, per_sample_weights, include_last_offset = _bag_inputs(
        input, weight, offsets, per_sample_weights, include_last_offset)
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    if sparse:
        raise _sparse_unsupported("embedding_bag")
    n = weight.size(0)
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-n} "
                               f"through {n - 1}, but got {padding_idx}")
        padding_idx %= n
    _check_offsets(offsets, input.shape[0], include_last_offset, mode)
    _check_index_range(input, n, functools.partial(_bag_index_error, n, _bag_fast_path(
        weight, mode, padding_idx)))
    return _F["_embedding_bag"](weight, input, offsets, per_sample_weights,
                                bool(scale_grad_by_freq), mode, bool(include_last_offset),
                                padding_idx)
