"""Distribution: the base class of every probability distribution.

A distribution has a `batch_shape` (independent distributions side by side, from broadcasting
its parameters) and an `event_shape` (the shape of one draw: () for scalars, (k,) for a
Categorical's one-hot or a multivariate normal). `sample(sample_shape)` returns
`sample_shape + batch_shape + event_shape`; `log_prob(value)` returns one number per batch
element of value.

With validation on (the default, as PyTorch's `__debug__`), parameters are checked against
`arg_constraints` when the distribution is built and values against `support` before
log_prob/cdf/icdf, raising PyTorch's ValueError messages. Checks read concrete values: under
jax tracing (jit, vmap) they are skipped.
"""

from __future__ import annotations

import warnings

import torchjax as torch

from .._tensor import Tensor
from . import constraints
from .utils import lazy_property, satisfied

__all__ = ["Distribution"]


class Distribution:
    """Base class: subclasses define arg_constraints, support and the methods they have."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions built without validate_args."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args expects a bool, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          "`arg_constraints = {}` or initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=3)
        for name, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            # a parameter given the other way (logits for probs) is computed lazily: skip it
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None),
                                                        lazy_property):
                continue
            value = getattr(self, name)
            if not satisfied(constraint, value):
                raise ValueError(
                    f"Expected parameter {name} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{value}")

    # -- shapes ------------------------------------------------------------------------------

    @property
    def batch_shape(self) -> torch.Size:
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> torch.Size:
        """The shape of one draw, without batching."""
        return self._event_shape

    def _extended_shape(self, sample_shape=()) -> torch.Size:
        """sample_shape + batch_shape + event_shape."""
        return torch.Size(tuple(sample_shape)) + self._batch_shape + self._event_shape

    def expand(self, batch_shape, _instance=None):
        """A new distribution with the parameters expanded (not copied) to `batch_shape`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement expand()")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, batch_shape, _instance, params):
        """The common expand: each tensor attribute in `params` (name -> how many rightmost
        non-batch dims it has) that this instance holds is expanded to batch_shape."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = torch.Size(batch_shape)
        for name, extra in params.items():
            if name in self.__dict__:
                value = self.__dict__[name]
                tail = tuple(value.shape[value.dim() - extra:]) if extra else ()
                setattr(new, name, value.expand(batch_shape + tail))
        return new, batch_shape

    def _finish_expand(self, new, batch_shape, event_shape=None):
        """Initialise an expanded copy (no re-validation: its parameters were checked)."""
        Distribution.__init__(new, batch_shape,
                              self._event_shape if event_shape is None else event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    # -- what subclasses define ----------------------------------------------------------------

    @property
    def arg_constraints(self) -> dict:
        """Parameter name -> the Constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint every value of this distribution satisfies."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation, with shape `batch_shape + event_shape`."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()) -> Tensor:
        """A draw of shape sample_shape + batch_shape + event_shape, without gradients."""
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """A reparameterised draw: gradients flow from it back to the parameters."""
        raise NotImplementedError(
            f"{type(self).__name__} has no reparameterised sampler (has_rsample is False): "
            "rsample() is not available; use sample(), which carries no gradient")

    def sample_n(self, n: int) -> Tensor:
        """Deprecated form of `sample((n,))`; warns with a FutureWarning."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample((n,))

    def log_prob(self, value) -> Tensor:
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob()")

    def cdf(self, value) -> Tensor:
        """The cumulative distribution function evaluated at `value`, elementwise over the batch.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf()")

    def icdf(self, value) -> Tensor:
        """The inverse of the CDF: the value whose cumulative probability is `value`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf()")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value in the finite support, stacked along a new leading dimension; with
        `expand=True` each is broadcast to the batch shape.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not implement enumerate_support() (only finite "
            "discrete distributions can)")

    def entropy(self) -> Tensor:
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy()")

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return torch.exp(self.entropy())

    # -- validation ---------------------------------------------------------------------------

    def _validate_sample(self, value) -> None:
        """Raise PyTorch's ValueError when value cannot be scored by this distribution."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        n = len(self._event_shape)
        actual = value.size()
        if actual[len(actual) - n:] != self._event_shape:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{actual} vs {self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        for a, e in zip(reversed(actual), reversed(expected)):
            if a != 1 and e != 1 and a != e:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=3)
            return
        if not satisfied(support, value):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self) -> str:
        shown = []
        for name in self.arg_constraints:
            if name in self.__dict__:
                v = self.__dict__[name]
                shown.append(f"{name}: {v if v.numel() == 1 else v.size()}")
        return f"{type(self).__name__}({', '.join(shown)})"
