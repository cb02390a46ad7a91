"""Activation rows: softmax / log_softmax and the elementwise activations of nn.functional.

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
from ._registry import op

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


@op(grad="LeakyReluBackward0", **_NN)
def leaky_relu(input, negative_slope=0.01):
    """x for x > 0, negative_slope * x otherwise (the gradient at 0 is negative_slope)."""
    _need_float(input, "leaky_relu_cpu")
    return jnp.where(input > 0, input, input * _const(negative_slope, input))


def _elu(input, alpha, scale, input_scale):
    neg = _const(alpha * scale, input) * jnp.expm1(input * _const(input_scale, input))
    return jnp.where(input > 0, input * _const(scale, input), neg)


@op(grad="EluBackward0", **_NN)
def elu(input, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    _need_float(input, "elu_cpu")
    return _elu(input, alpha, 1.0, 1.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@op(grad="EluBackward0", method=False)
def selu(input):
    """scale * elu(x, alpha) with the self-normalising constants."""
    _need_float(input, "elu_cpu")
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


@op(grad="CeluBackward0", method=False)
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


@op(promote="float", grad="SubBackward0", **_NN)
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


@op(grad="ThresholdBackward0", method=False)
def threshold(input, threshold, value):
    """x where x > threshold, value elsewhere."""
    return jnp.where(input > threshold, input, _const(value, input))
