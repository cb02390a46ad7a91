"""nn.init: in-place initialisers with PyTorch's formulas (same distributions, bounds, gains
and errors; the random bits differ)."""

from __future__ import annotations

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_", "uniform", "normal", "constant", "eye",
           "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
           "orthogonal", "sparse"]

import functools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _meta, _one_off, _programs, _random
from .._autograd.grad_mode import no_grad
from .._tensor import Tensor
from .._x64 import scope, scoped


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (leaky_relu's param is its negative slope)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or \
                isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4  # PyTorch's empirical value
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with samples from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with samples from N(mean, std**2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


@functools.lru_cache(maxsize=64)
def _trunc_normal_kernel(size: int, np_dtype):
    """A jitted sampler of `size` truncated normal values."""
    cd = jnp.float64 if np.dtype(np_dtype) == np.float64 else jnp.float32

    def f(key, offset, mean, std, a, b):
        k = jax.random.fold_in(key, offset)
        z = jax.random.truncated_normal(k, (a - mean) / std, (b - mean) / std, (size,), cd)
        # rounding of mean + std * z must not leave [a, b]
        return jnp.clip(mean + std * z, a, b).astype(np_dtype)

    return _programs.jit(f)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with samples from N(mean, std**2) truncated to [a, b]."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    shape = tuple(tensor._data.shape)
    n = math.prod(shape)
    # one sampler per size class (cut to shape), not one compile per shape; a shape met once
    # or twice is cut on the host, without even a slice program (torchjax._creation._sample)
    few = _one_off.few(("trunc_normal", shape, tensor.dtype.np), n)
    size = _one_off.size_class(n) if few else max(1024, 1 << max(n - 1, 0).bit_length())
    key, offset = _random.key_parts(generator)
    with scope():  # torchjax's x64 scope: float64 samples for a float64 tensor
        flat = _trunc_normal_kernel(size, tensor.dtype.np)(key, offset, float(mean),
                                                            float(std), float(a), float(b))
        if few:
            arr = _one_off.to_device(np.asarray(flat)[:n].reshape(shape), flat)
        else:
            arr = jax.lax.slice(flat, (0,), (n,)).reshape(shape)
        with no_grad():
            return tensor.copy_(Tensor._wrap(arr))


def _host_fill(tensor: Tensor, val) -> bool:
    """Write val into a tensor (not a view) with an array made on the host (_one_off): a
    module's init fills each parameter shape once or twice, and a fill program is a 20-40 ms
    compile. Only where NumPy gives exactly val in the tensor's dtype (an inexact value, a NaN,
    or a float into an integer dtype take the fill program, which rounds as PyTorch does)."""
    data = tensor._data
    if tensor._base is not None or _meta.is_meta(data) or isinstance(val, bool):
        return False
    try:
        exact = np.array(val, data.dtype) == val
    except (TypeError, ValueError, OverflowError):
        return False
    if not (exact and _one_off.few(("fill", data.shape, data.dtype, val), data.size,
                                   _one_off.FILL_CALLS)):
        return False
    with scope():  # (a float64 or int64 array stays one through JAX)
        tensor._write(_one_off.to_device(np.full(data.shape, val, data.dtype), data))
    return True


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with val."""
    with no_grad():
        return tensor if _host_fill(tensor, val) else tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    with no_grad():
        return tensor if _host_fill(tensor, 0) else tensor.zero_()


@scoped  # values of the tensor's dtype, int64 and float64 included
def _fill_from(tensor: Tensor, values: np.ndarray) -> Tensor:
    with no_grad():
        return tensor.copy_(Tensor._wrap(jnp.asarray(values, tensor.dtype.np)))


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-d tensor with the identity matrix (ones on the diagonal)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill_from(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-d convolution weight with the Dirac delta: the convolution keeps its
    input channels (per group) unchanged."""
    dimensions = tensor.ndimension()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    values = np.zeros(tuple(sizes))
    center = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            values[(g * out_per_group + d, d, *center)] = 1
    return _fill_from(tensor, values)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _kaiming_std(tensor, a, mode, nonlinearity) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """N(0, std**2) with std = gain / sqrt(fan) (He et al.)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix (trailing dims flattened) scaled by gain (Saxe et al.)."""
    from .. import linalg
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with no_grad():
        flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        if rows < cols:
            flattened = flattened.t()
        q, r = linalg.qr(flattened)
        # the sign fix makes Q uniformly (Haar) distributed
        q = q * r.diagonal().sign()
        if rows < cols:
            q = q.t()
        tensor.copy_(q.reshape(tensor.shape))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """N(0, std**2) with ceil(sparsity * rows) random entries of every column set to 0."""
    from .. import _creation
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        if num_zeros:
            # each column's rows in a random order (PyTorch's randperm per column, which also
            # draws from the default generator): the first num_zeros are zeroed
            rank = _creation.rand(rows, cols).argsort(dim=0).argsort(dim=0)
            tensor.masked_fill_(rank < num_zeros, 0)
    return tensor


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"Deprecated: use nn.init.{new_name}."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
