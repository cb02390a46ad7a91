"""Elementwise transforms: exp, power, sigmoid, softplus, tanh, abs, affine, and a
distribution's cdf."""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp

import torchjax as torch
from torchjax.nn import functional as F

from .. import constraints
from .._jax import clamp, kernel
from ..utils import broadcast_all, lazy_property
from ._base import Transform


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return x


class PowerTransform(Transform):
    """y = x ** exponent, on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        """This transform with the given `cache_size` (0 or 1); a cache of 1 remembers the last
        input/output pair so the inverse of a recent output is exact.
        """
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        """The sign of the exponent, elementwise: whether the power increases or decreases."""
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(
            self.exponent.eq(other.exponent).all().item())

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        """The shape of the output for an input of shape `shape`."""
        return torch.broadcast_shapes(shape, tuple(self.exponent.shape))

    def inverse_shape(self, shape):
        """The shape of the input that gives an output of shape `shape`."""
        return torch.broadcast_shapes(shape, tuple(self.exponent.shape))


@kernel("SigmoidTransform")
def _clipped_sigmoid(x):
    """sigmoid(x) kept inside (0, 1) so its logit stays finite."""
    info = jnp.finfo(x.dtype)
    return clamp(jax.nn.sigmoid(x), info.tiny, 1.0 - info.eps)


@kernel("SigmoidTransformInverse")
def _logit(y):
    info = jnp.finfo(y.dtype)
    y = clamp(y, info.tiny, 1.0 - info.eps)
    return jnp.log(y) - jnp.log1p(-y)


@kernel("SigmoidLogAbsDetJacobian")
def _sigmoid_ladj(x):
    return -jax.nn.softplus(-x) - jax.nn.softplus(x)


@kernel("SoftplusTransformInverse")
def _softplus_inverse(y):
    # log(exp(y) - 1) written to stay finite for large y
    return jnp.log(-jnp.expm1(-y)) + y


@kernel("TanhLogAbsDetJacobian")
def _tanh_ladj(x):
    # log(1 - tanh(x)^2) in a form that does not lose precision for large |x|
    return 2.0 * (math.log(2.0) - x - jax.nn.softplus(-2.0 * x))


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x))."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        return _logit(y)

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return _sigmoid_ladj(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return _softplus_inverse(y)

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return -F.softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x). Its inverse is unstable near +-1: use cache_size=1 when you invert
    values it produced."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return torch.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return _tanh_ladj(x)


class AbsTransform(Transform):
    """y = |x| (not injective: its "inverse" returns the positive root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


def _same(a, b) -> bool:
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    return bool((a == b).all().item())


class AffineTransform(Transform):
    """y = loc + scale * x, with the rightmost `event_dim` dims as one event."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        """How many rightmost dimensions form one event (the larger of the domain's and
        codomain's).
        """
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The constraint that inputs of this transform satisfy."""
        return (constraints.real if self.event_dim == 0
                else constraints.independent(constraints.real, self.event_dim))

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The constraint that outputs of this transform satisfy."""
        return (constraints.real if self.event_dim == 0
                else constraints.independent(constraints.real, self.event_dim))

    def with_cache(self, cache_size=1):
        """This transform with the given `cache_size` (0 or 1); a cache of 1 remembers the last
        input/output pair so the inverse of a recent output is exact.
        """
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        return (isinstance(other, AffineTransform) and _same(self.loc, other.loc)
                and _same(self.scale, other.scale))

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        """The sign of the Jacobian determinant (+1 or -1) for a monotone elementwise transform."""
        if isinstance(self.scale, numbers.Number):
            s = float(self.scale)
            return 1 if s > 0 else -1 if s < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Number):
            result = torch.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[:result.dim() - self.event_dim]) + (-1,))
            result = result.sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        """The shape of the output for an input of shape `shape`."""
        return torch.broadcast_shapes(shape, tuple(getattr(self.loc, "shape", ())),
                                      tuple(getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x): maps the distribution's support onto [0, 1]."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        """The constraint that inputs of this transform satisfy."""
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        """This transform with the given `cache_size` (0 or 1); a cache of 1 remembers the last
        input/output pair so the inverse of a recent output is exact.
        """
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
