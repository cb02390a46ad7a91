"""Activation rows: softmax / log_softmax, the elementwise activations of nn.functional, glu,
prelu and rrelu (whose random slopes torch.rrelu draws before calling the row).

Most of these are public only as torch.nn.functional.<name> (function=False, method=False):
torchjax.nn.functional picks them up from the table. Gradients at kinks follow PyTorch: 0 at
the bounds of hardtanh / relu6 / hardsigmoid / softshrink / hardshrink / threshold,
negative_slope at 0 for leaky_relu, the negative branch at 0 for elu / selu / celu.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .. import _dtypes
from ._registry import function, op

_NN = dict(function=False, method=False, namespace="torch.nn.functional")


def _type_name(dtype):
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(dtype).name]


def _need_float(input, kernel):
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(input.dtype)}'")


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _softmax_like(f, input, dim, dtype, kernel):
    if dtype is not None:
        input = input.astype(_dtypes.to_dtype(dtype).np)
    _need_float(input, kernel)
    if dim is None:
        # PyTorch's implicit choice (deprecated): dim 0 for 0-, 1- and 3-d inputs, else 1
        dim = 0 if input.ndim in (0, 1, 3) else 1
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return f(input.reshape(1), axis=0).reshape(())
    return f(input, axis=d)


@op(promote="none", saves=("result",), grad="SoftmaxBackward0")
def softmax(input, dim, dtype=None):
    """exp(input) / sum(exp(input)) along dim, computed stably; dtype casts the input first."""
    return _softmax_like(jax.nn.softmax, input, dim, dtype, "softmax_lastdim_kernel_impl")


@op(promote="none", saves=("result",), grad="LogSoftmaxBackward0")
def log_softmax(input, dim, dtype=None):
    """log(softmax(input)) along dim, computed stably; dtype casts the input first."""
    return _softmax_like(jax.nn.log_softmax, input, dim, dtype, "log_softmax_lastdim_kernel_impl")


# -- elementwise activations -------------------------------------------------------------------

def _zero(x):
    return jnp.zeros((), x.dtype)


def _const(v, x):
    return jnp.asarray(v, x.dtype)


@op(grad="GeluBackward0", **_NN)
def gelu(input, approximate="none"):
    """x * Phi(x) with the exact erf form by default; approximate='tanh' for the tanh form."""
    _need_float(input, "GeluKernelImpl")
    if approximate == "none":
        return input * 0.5 * (1 + jax.scipy.special.erf(input * _const(math.sqrt(0.5), input)))
    if approximate == "tanh":
        inner = _const(math.sqrt(2 / math.pi), input) * (input + 0.044715 * input ** 3)
        return 0.5 * input * (1 + jnp.tanh(inner))
    raise RuntimeError("approximate argument must be either none or tanh.")


@op(grad="SiluBackward0", **_NN)
def silu(input):
    """x * sigmoid(x)."""
    _need_float(input, "silu_cpu")
    return input * jax.nn.sigmoid(input)


@op(grad="LeakyReluBackward0", inplace_overloads=1, **_NN)
def leaky_relu(input, negative_slope=0.01):
    """x for x > 0, negative_slope * x otherwise (the gradient at 0 is negative_slope)."""
    _need_float(input, "leaky_relu_cpu")
    return jnp.where(input > 0, input, input * _const(negative_slope, input))


def _elu(input, alpha, scale, input_scale):
    neg = _const(alpha * scale, input) * jnp.expm1(input * _const(input_scale, input))
    return jnp.where(input > 0, input * _const(scale, input), neg)


@op(grad="EluBackward0", inplace_overloads=1, **_NN)
def elu(input, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    _need_float(input, "elu_cpu")
    return _elu(input, alpha, 1.0, 1.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@op(grad="EluBackward0", method=False, inplace_overloads=1)
def selu(input):
    """scale * elu(x, alpha) with the self-normalising constants."""
    _need_float(input, "elu_cpu")
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


@op(grad="CeluBackward0", method=False, inplace_overloads=1)
def celu(input, alpha=1.0):
    """x for x > 0, alpha * (exp(x / alpha) - 1) otherwise."""
    _need_float(input, "elu_cpu")
    return _elu(input, alpha, 1.0, 1.0 / alpha)


def _hardtanh(input, lo, hi):
    # constants outside (lo, hi): the gradient is 0 at the bounds, as in PyTorch
    inside = (input > lo) & (input < hi)
    outside = jnp.where(input <= lo, _const(lo, input), _const(hi, input))
    return jnp.where(inside, input, outside)


@op(grad="HardtanhBackward0", **_NN)
def hardtanh(input, min_val=-1.0, max_val=1.0):
    """input clamped into [min_val, max_val]; the gradient is 0 at the bounds."""
    if input.dtype == jnp.bool_:
        raise NotImplementedError("\"hardtanh_cpu\" not implemented for 'Bool'")
    return _hardtanh(input, min_val, max_val)


@op(grad="HardtanhBackward0", **_NN)
def relu6(input):
    """min(max(x, 0), 6); the gradient is 0 at 0 and at 6."""
    if input.dtype == jnp.bool_:
        raise NotImplementedError("\"hardtanh_cpu\" not implemented for 'Bool'")
    return _hardtanh(input, 0, 6)


@op(grad="SoftplusBackward0", **_NN)
def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    _need_float(input, "softplus_cpu")
    bx = input * _const(beta, input)
    soft = jnp.logaddexp(_zero(input), bx) / _const(beta, input)
    return jnp.where(bx > threshold, input, soft)


@op(grad="LogSigmoidBackward0", **_NN)
def logsigmoid(input):
    """log(sigmoid(x)), computed stably."""
    _need_float(input, "log_sigmoid_forward_cpu")
    return jax.nn.log_sigmoid(input)


@op(grad="MishBackward0", **_NN)
def mish(input):
    """x * tanh(softplus(x))."""
    _need_float(input, "mish_cpu")
    return input * jnp.tanh(jnp.logaddexp(_zero(input), input))


@op(grad="HardsigmoidBackward0", **_NN)
def hardsigmoid(input):
    """relu6(x + 3) / 6; the gradient is 0 at -3 and 3."""
    _need_float(input, "hardsigmoid_cpu")
    return _hardtanh(input + 3, 0, 6) / 6


@op(grad="HardswishBackward0", **_NN)
def hardswish(input):
    """x * relu6(x + 3) / 6; the gradient is 0 at -3 and 1 at 3, as in PyTorch."""
    _need_float(input, "hardswish_cpu")
    mid = input * (input + 3) / 6
    return jnp.where(input <= -3, _zero(input), jnp.where(input < 3, mid, input))


@op(promote="float", grad="DivBackward0", **_NN)
def softsign(input):
    """x / (1 + |x|)."""
    return input / (input * jnp.sign(input) + 1)


@op(promote="float", grad="SubBackward0", **_NN, saves=())
def tanhshrink(input):
    """x - tanh(x)."""
    return input - jnp.tanh(input)


@op(grad="SoftshrinkBackward0", **_NN)
def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between (gradient 0 at the ends)."""
    _need_float(input, "softshrink_cpu")
    if lambd < 0:
        big = float(jnp.finfo(input.dtype).max)
        raise RuntimeError(f"lambda must be in range [0, {big:g}] for input dtype "
                           f"{_type_name(input.dtype)}, but found {lambd:g}")
    lam = _const(lambd, input)
    return jnp.where(input > lam, input - lam, jnp.where(input < -lam, input + lam,
                                                         _zero(input)))


@op(grad="HardshrinkBackward0", method=True)
def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, 0 elsewhere (gradient 0 at the ends)."""
    _need_float(input, "hardshrink_cpu")
    lam = _const(lambd, input)
    return jnp.where((input > lam) | (input < -lam), input, _zero(input))


@op(grad="ThresholdBackward0", method=False, inplace_overloads=1)
def threshold(input, threshold, value):
    """x where x > threshold, value elsewhere."""
    return jnp.where(input > threshold, input, _const(value, input))


@op(grad="GluBackward0", **_NN)
def glu(input, dim=-1):
    """a * sigmoid(b) for the halves a, b of input along dim."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    _need_float(input, "glu_cpu")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    a, b = jnp.split(input, 2, axis=d)
    return a * jax.nn.sigmoid(b)


@op(tensors=("input", "weight"), promote="none", grad="PreluKernelBackward0")
def prelu(input, weight):
    """x for x > 0, weight * x otherwise, with one weight per channel (dim 1) or one in all."""
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_type_name(input.dtype)} "
                           f"and {_type_name(weight.dtype)}")
    if weight.size != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != weight.size:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.size} and channel size = "
                               f"{channels}.")
    if weight.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    _need_float(input, "prelu_cpu")
    if weight.size == 1:
        w = weight.reshape(())
    else:
        w = weight.reshape((1, -1) + (1,) * (input.ndim - 2))
    return jnp.where(input > 0, input, w * input)


def _check_rrelu_bounds(lower, upper):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


@op(tensors=("input", "noise"), promote="none", grad="RreluWithNoiseBackward0", inplace_overloads=1,
    function=False, method=False, namespace="torch._C._nn")
def rrelu_with_noise(input, noise, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """Randomized leaky ReLU: slope `noise` (drawn in [lower, upper]) for x <= 0 in training,
    the fixed slope (lower + upper) / 2 in evaluation."""
    _check_rrelu_bounds(lower, upper)
    if not training:
        _need_float(input, "leaky_relu_cpu")
        return jnp.where(input > 0, input, input * _const((lower + upper) / 2, input))
    _need_float(input, "rrelu_with_noise_out_cpu")
    return jnp.where(input > 0, input, input * noise.astype(input.dtype))


def _rrelu_noise(input, lower, upper, training, generator):
    """The slopes rrelu_with_noise reads in training (None in evaluation)."""
    if not training or not input.is_floating_point():
        return None
    return input.new_empty(input.shape).uniform_(lower, upper, generator=generator)


@function(name="rrelu", method=False)
def _rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """torch.rrelu: leaky ReLU with random slopes in [lower, upper] while training."""
    from .._dispatch import call_op
    _check_rrelu_bounds(lower, upper)
    noise = _rrelu_noise(input, lower, upper, training, generator)
    return call_op("rrelu_with_noise", input, noise, lower, upper, training)


def _call_op_inplace(name, *args):
    from .._dispatch import call_op_inplace
    return call_op_inplace(name, *args)


@function(name="rrelu_", method=False)
def _rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """torch.rrelu_: rrelu written into input."""
    _check_rrelu_bounds(lower, upper)
    noise = _rrelu_noise(input, lower, upper, training, generator)
    return _call_op_inplace("rrelu_with_noise", input, noise, lower, upper, training)


@function(name="selu_", method=False)
def _selu_(input):
    """torch.selu_: selu written into input."""
    return _call_op_inplace("selu", input)


@function(name="celu_", method=False)
def _celu_(input, alpha=1.0):
    """torch.celu_: celu written into input."""
    return _call_op_inplace("celu", input, alpha)
